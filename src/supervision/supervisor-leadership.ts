import { Subscription } from 'rxjs';
import { SerialQueue } from '../common/serial-queue';
import { NodeDirectory } from '../cluster/node-directory.port';
import { SUPERVISOR_LEASE_NAME, SupervisorLease } from '../cluster/supervisor-lease.port';
import { Fence, JournalReader } from '../journal/journal.port';
import { SessionDirectory } from './session-directory.port';
import { SupervisionLog, reasonOf } from './supervision-log';
import { LeadHow, RoundFollowers, decideRestore, recoverableWorkers, roundAtTakeover } from './supervision-restore';
import { SupervisionCommand, SupervisionState, isOn } from './supervision.decider';
import { RoundInFlight, WakeReason } from './supervision.machine';

/** What leading needs of supervision. */
export interface LeadershipHost {
  /** Folds what other nodes appended to the supervision stream, so this node leads from the current state. */
  catchUp(): Promise<void>;
  current(): { state: SupervisionState; version: number };
  /** A command on supervision's command path (this node leads when it is called). */
  execute(cmd: SupervisionCommand): Promise<unknown>;
  /**
   * Supervision is on and this node leads it: rounds run from here. `reasons` are those of the round the takeover cut
   * off; `kept` the round in flight it kept, for the brain that still follows it.
   */
  resumed(reasons: readonly WakeReason[], kept: RoundInFlight | null): void;
  /** How many clients follow the rounds stream on this node now. */
  roundListeners(): number;
  /** This node stopped leading: its rounds, their timers and deliveries stop at once. */
  steppedDown(): void;
}

export interface LeadershipDeps {
  lease: SupervisorLease;
  nodes: NodeDirectory;
  journal: JournalReader;
  sessions: Pick<SessionDirectory, 'list'>;
  restore_ttl_s: number;
  now: () => number;
  /** Supervision's one queue: taking over is serialised with the commands. */
  queue: SerialQueue;
  log: SupervisionLog;
}

/**
 * Gaining and losing the supervisor lease. Among nodes sharing a journal only the lease holder runs rounds, timeouts
 * and the stall watchdog, and its appends are fenced by its term. A node that takes the lease (at boot, or from
 * another node) catches up, then restores supervision under the restart rules; one that loses it stops its rounds at
 * once, and keeps following the journal.
 */
export class SupervisorLeadership {
  /** The lease term this node supervises in; null while it follows. */
  private term: number | null = null;
  private sub: Subscription | null = null;

  constructor(
    private readonly deps: LeadershipDeps,
    private readonly host: LeadershipHost,
  ) {}

  /** Leads at once if the lease is held at boot, then follows the lease's changes. */
  async start(): Promise<void> {
    const { lease, queue, log } = this.deps;
    const first = lease.state();
    if (first.role === 'leader') await queue.run(() => this.lead(first.term, 'boot'));
    this.sub = lease.changes$.subscribe((s) => {
      if (s.role === 'follower') this.stepDown();
      else if (s.term !== this.term) queue.run(() => this.lead(s.term, 'failover')).catch((e: unknown) => log.error(`taking over supervision (term ${s.term}) failed: ${reasonOf(e)}`));
    });
  }

  stop(): void {
    this.sub?.unsubscribe();
    this.sub = null;
  }

  /** Whether this node took the lease in a term it has not stepped down from (its own clock may say the lease ran out). */
  get leading(): boolean {
    return this.term !== null;
  }

  /** Whether this node supervises now: it took the lease and its own clock says it still holds it. */
  isLeader(): boolean {
    const s = this.deps.lease.state();
    return this.term !== null && s.role === 'leader' && s.term === this.term;
  }

  /** The term the leader's appends are fenced by: once another node holds the lease, none of them is written. Undefined while following. */
  fence(): Fence | undefined {
    return this.term === null ? undefined : { lease: SUPERVISOR_LEASE_NAME, holder: this.deps.lease.holder, term: this.term };
  }

  /** Takes over in a new term: reads what the others appended, then restores. A term the lease has moved on from is not taken. */
  private async lead(term: number, how: LeadHow): Promise<void> {
    const s = this.deps.lease.state();
    if (s.role !== 'leader' || s.term !== term) return;
    await this.host.catchUp();
    this.term = term;
    if (how === 'failover') this.deps.log.log(`supervising as the lease holder (term ${term})`);
    await this.restore(how);
  }

  /** Lost the lease: rounds, their timers and the watchdog stop here at once; the state keeps following the journal. */
  private stepDown(): void {
    if (this.term === null) return;
    this.deps.log.warn(`no longer the supervisor lease holder (term ${this.term}): following`);
    this.term = null;
    this.host.steppedDown();
  }

  /**
   * Supervision found on is restored when it was current within the TTL and a supervised worker survived (boot: as the
   * one process restarting; failover: the workers alive on any node count), else closed with why. The round in flight
   * is kept when a brain the user brings still follows it on a live node (roundAtTakeover); otherwise it was cut off:
   * it ends interrupted, with why, and its reasons wake the next round.
   */
  private async restore(how: LeadHow): Promise<void> {
    const { state, version } = this.host.current();
    if (!isOn(state) || version === 0) return;
    const decision = decideRestore({
      now: this.deps.now(),
      last_seen_at: Math.max(state.last_event_at, await this.lastActivity(how)),
      restore_ttl_s: this.deps.restore_ttl_s,
      was_enabled: true,
      recoverable_supervised_workers: recoverableWorkers(this.deps.sessions.list(), this.deps.nodes),
    });
    if (!decision.restore) {
      await this.host.execute({ type: 'disable', reason: decision.reason === 'no_recoverable_worker' ? 'no_recoverable_worker' : 'restore_expired' });
      return;
    }
    const inFlight = state.machine.context.round;
    const interrupt = inFlight ? roundAtTakeover(inFlight, how, await this.followers()) : null;
    await this.host.execute({ type: 'resume', interrupt });
    const after = this.host.current().state;
    if (!isOn(after)) return;
    const kept = inFlight && !interrupt && after.machine.context.round?.id === inFlight.id ? inFlight : null;
    this.host.resumed(kept ? [] : (inFlight?.reasons ?? []), kept);
  }

  /** Who follows the rounds stream, the other nodes heard from afresh (a brain may have just connected to one). */
  private async followers(): Promise<RoundFollowers> {
    await this.deps.nodes.refresh().catch(() => undefined);
    return { self: this.host.roundListeners(), others: this.deps.nodes.roundFollowers() };
  }

  /**
   * Time of the newest event journaled before this process started (boot), or before this node took the lease
   * (failover): supervision was last known alive then. (Events this boot already wrote, such as recovered sessions, do
   * not count.)
   */
  private async lastActivity(how: LeadHow): Promise<number> {
    const { journal } = this.deps;
    const head = how === 'boot' ? journal.openedHead().seq : journal.head().seq;
    const [newest] = head > 0 ? await journal.readAll(head - 1, 1) : [];
    return newest ? Date.parse(newest.at) : 0;
  }
}
