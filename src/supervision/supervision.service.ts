import { Logger } from '@nestjs/common';
import { Observable, Subject, Subscription, defer, from, switchMap, takeUntil, timer } from 'rxjs';
import { EventBus } from '../bus/event-bus';
import { DomainError } from '../common/domain-error';
import { PageRequest, pageOf } from '../common/page';
import { pastRetention } from '../common/retention-queue';
import { RetentionSweeper } from '../common/retention-sweeper';
import { SerialQueue } from '../common/serial-queue';
import { NodeDirectory, soleNode } from '../cluster/node-directory.port';
import { SUPERVISOR_LEASE_NAME, SupervisorLease, heldLease } from '../cluster/supervisor-lease.port';
import { Fence, Journal, JournalConflictError, JournalEvent } from '../journal/journal.port';
import { RoundDriver, streamDriver } from './round-driver.port';
import { RoundEnding, RoundView } from './round.view';
import { roundPrompt, workerEvidence } from './round-prompt';
import { SessionDirectory } from './session-directory.port';
import { Stall, WatchdogConfig, cooldownKey, dropExpiredCooldowns, scanForStalls, watchdogTicks } from './stall-watchdog';
import { decideRestore, recoverableWorkers } from './supervision-restore';
import { ScopeMode, ToolScopeMode, planScope } from './supervision-scope';
import {
  SupervisionCommand,
  SupervisionDecision,
  SupervisionJournalEvent,
  SupervisionSnapshot,
  SupervisionState,
  decide,
  evolve,
  initialSupervisionState,
  isOn,
} from './supervision.decider';
import { ROUND_OUTCOME, RoundEndType, SupervisionEventMap } from './supervision.events';
import {
  ClosedReason,
  RoundInFlight,
  RoundOutcome,
  StartedBy,
  SupervisionContext,
  WakeReason,
  WorkerEvidence,
  supervisionMachine,
  wakeReason,
} from './supervision.machine';
import { classifySessionEvent } from './wake-triggers';
import { wakeRounds } from './wake-pipeline';

export const SUPERVISION_STREAM = 'supervision';
/**
 * The supervision state is snapshotted every this many events, or every as many events as rounds are kept if that is
 * more (a snapshot holds them all, so its cost per event stays bounded); boot reads the snapshot and the tail after it.
 */
export const SNAPSHOT_EVERY = 256;

/** The events of GET /session-os/main-brain/rounds/stream. */
export const isRoundEvent = (e: JournalEvent): boolean => e.stream === SUPERVISION_STREAM && e.type.startsWith('round.');

export interface SupervisionSettings {
  debounce_ms: number;
  restore_ttl_s: number;
  round_timeout_s: number;
  /** The stall watchdog; absent means off (unit tests that do not exercise it). */
  watchdog?: WatchdogConfig;
  /** How long an ended round stays in memory; absent keeps every round. */
  retention_s?: number;
}

/** The seed's state object (enabled, turns_used, max_turns, task_hint) plus what DESIGN.md adds. */
export type AutonomousView = Pick<SupervisionContext, 'turns_used' | 'max_turns' | 'task_hint' | 'started_by' | 'closed_reason' | 'summary'> & {
  enabled: boolean;
  round_in_flight: string | null;
  scope: ScopeView;
};

/** Which sessions wake the brain: the rule for sessions created later (the last mode set other than invert) and the live sessions on each side. */
export interface ScopeView {
  mode: ToolScopeMode;
  supervised: string[];
  excluded: string[];
}

export interface ScopeResult {
  mode: ScopeMode;
  supervised: string[];
  excluded: string[];
  unknown_ids: string[];
}

export interface EnableRequest {
  task_hint?: string;
  max_turns?: number;
  scope_mode?: ToolScopeMode;
  scope_session_ids?: string[];
}

interface Trigger {
  reason: WakeReason;
  immediate?: boolean;
}

/** The snapshot of stream `supervision`: the machine, the rounds and stall cooldowns in memory, and when the stream last moved. */
interface StoredSupervision {
  value: SupervisionSnapshot['value'];
  context: SupervisionContext;
  /** In the order they started, each with the seq of its round.started (its place in the list); `failure` is absent in snapshots written before rounds could fail. */
  rounds: Array<{ seq: number; round: Omit<RoundView, 'failure'> & { failure?: string | null } }>;
  cooldowns: Array<[string, number]>;
  last_event_at: number;
  /** The last scope mode set other than invert; absent in snapshots written before it was kept. */
  scope_mode?: ToolScopeMode;
}

const SYSTEM_REASON = (trigger: string, message: string | null = null): WakeReason =>
  wakeReason({ session_id: '-', alias: '-', trigger, state: null, message });

const reasonOf = (e: unknown): string => (e as Error)?.message ?? String(e);

/** The nodes sharing the journal, and this node's hold on the supervisor lease. */
export interface SupervisionCluster {
  lease: SupervisorLease;
  nodes: NodeDirectory;
}

/** A node alone on its journal: it always holds the lease. */
export const soleSupervision = (self = 'local'): SupervisionCluster => ({ lease: heldLease(self), nodes: soleNode(self) });

/** How often a command decided against a stale state is caught up and decided again before its conflict is answered. */
const CONFLICT_RETRIES = 5;

/** Commands only the lease holder's own logic makes: a follower never decides them. */
const LEADER_ONLY = new Set<SupervisionCommand['type']>(['start_round', 'time_out_round', 'fail_round', 'resume', 'detect_stall']);

/**
 * Owns supervision's state. Every change is a command decided against the state (supervision.decider.ts), whose
 * events are journaled (stream `supervision`), then folded in; replay folds the journal the same way. Changes are
 * serialised, so REST, tools, triggers and timeouts never interleave.
 *
 * Among nodes sharing a journal, only the holder of the supervisor lease runs rounds, timeouts and the stall watchdog,
 * and its appends are fenced by its term. Every node folds the supervision events the others append (so its reads are
 * current) and decides a user's command against that state, appended with the expected version (a conflict: caught up,
 * decided again); the leader reacts to what it folds. A node that takes the lease catches up and restores supervision
 * under the restart rules.
 */
export class SupervisionService {
  private state: SupervisionState = initialSupervisionState();
  private version = 0;
  /** The version of the last snapshot written, and the time of the newest supervision event. */
  private snapshotVersion = 0;
  private snapshotWrites: Promise<void> = Promise.resolve();
  private lastEventAt = 0;
  /** The rounds in memory, in the order they started: the one in flight, and ended ones until their retention has passed. */
  private readonly rounds = new Map<string, RoundView>();
  /** Each round's seq of round.started: the list's order, and what its cursor names. */
  private readonly roundSeqs = new Map<string, number>();
  private readonly roundRetention: RetentionSweeper;
  private readonly roundEnded = new Map<string, Subject<RoundEnding>>();
  /** Until when each (session, stall kind) may not fire again; rebuilt from journaled stall events. */
  private readonly stallCooldowns = new Map<string, number>();
  private readonly triggers = new Subject<Trigger>();
  private pipeline: Subscription | null = null;
  private busSub: Subscription | null = null;
  private readonly queue = new SerialQueue();
  private readonly stop$ = new Subject<void>();
  /** The lease term this node supervises in; null while it follows. */
  private leadingTerm: number | null = null;
  /** Fires when this node stops leading: its round timers end with it. */
  private readonly demoted$ = new Subject<void>();
  private leaseSub: Subscription | null = null;
  /** Work nobody waits for (timeouts, watchdog scans, closes, a driver's end of a round) reports its failures here. */
  private readonly logger = new Logger('supervision');

  constructor(
    private readonly bus: EventBus,
    private readonly journal: Journal,
    private readonly sessions: SessionDirectory,
    private readonly settings: SupervisionSettings,
    private readonly now: () => number,
    private readonly newId: () => string,
    private driver: RoundDriver = streamDriver,
    private readonly cluster: SupervisionCluster = soleSupervision(),
  ) {
    const retentionMs = settings.retention_s === undefined ? Infinity : settings.retention_s * 1000;
    this.roundRetention = new RetentionSweeper(retentionMs, now, (ids) => {
      for (const id of ids) {
        this.rounds.delete(id);
        this.roundSeqs.delete(id);
      }
      return [];
    });
  }

  /** How rounds reach the main brain, set by the main-brain module before supervision starts. */
  useDriver(driver: RoundDriver): void {
    this.driver = driver;
  }

  /** The driver rounds go to (GET /main-brain/conversation names it). */
  get driverName(): string {
    return this.driver.name;
  }

  /**
   * Rebuilds from the journal (the snapshot, then the events after it), then follows the journal; holding the lease, it
   * applies the restore rule and leads.
   */
  async start(): Promise<void> {
    const stored = await this.journal.loadSnapshot<StoredSupervision>(SUPERVISION_STREAM);
    if (stored) this.restoreSnapshot(stored.state);
    this.version = this.snapshotVersion = stored?.version ?? 0;
    for (const e of await this.journal.readStream(SUPERVISION_STREAM, this.version + 1)) {
      this.replay(e);
      this.version = e.version;
    }
    dropExpiredCooldowns(this.stallCooldowns, this.now());
    this.sessions.excludeNewSessions(this.state.scope_mode === 'only');
    this.roundRetention.start();
    this.busSub = this.bus.events$.subscribe((e) => {
      if (e.stream === SUPERVISION_STREAM) this.follow(e as unknown as JournalEvent);
      else if (e.type.startsWith('session.')) {
        this.onSessionEvent(e as unknown as JournalEvent).catch((err: unknown) => this.logger.error(`${e.type} of ${e.stream} (seq ${e.seq}) not handled: ${reasonOf(err)}`));
      }
    });
    if (this.settings.watchdog) {
      this.busSub.add(
        watchdogTicks(this.settings.watchdog).subscribe(() => {
          this.scanStalls().catch((err: unknown) => this.logger.error(`stall watchdog: the scan failed: ${reasonOf(err)}`));
        }),
      );
    }
    const first = this.cluster.lease.state();
    if (first.role === 'leader') await this.queue.run(() => this.lead(first.term, 'boot'));
    this.leaseSub = this.cluster.lease.changes$.subscribe((s) => {
      if (s.role === 'follower') this.stepDown();
      else if (s.term !== this.leadingTerm) {
        this.queue.run(() => this.lead(s.term, 'failover')).catch((e: unknown) => this.logger.error(`taking over supervision (term ${s.term}) failed: ${reasonOf(e)}`));
      }
    });
  }

  /** Whether this node supervises now: it took the lease and its own clock says it still holds it. */
  isLeader(): boolean {
    const s = this.cluster.lease.state();
    return this.leadingTerm !== null && s.role === 'leader' && s.term === this.leadingTerm;
  }

  /**
   * Takes over supervision in a new term: reads what the others appended, then restores under the restart rules
   * (boot: as the one process restarting; failover: the workers alive on any node count).
   */
  private async lead(term: number, how: 'boot' | 'failover'): Promise<void> {
    const s = this.cluster.lease.state();
    if (s.role !== 'leader' || s.term !== term) return;
    await this.refollow();
    this.leadingTerm = term;
    if (how === 'failover') this.logger.log(`supervising as the lease holder (term ${term})`);
    await this.restore(how);
  }

  /** Reads what other nodes appended and folds the supervision events this node has not folded yet, in order. */
  private async refollow(): Promise<void> {
    await this.journal.catchUp();
    for (const e of await this.journal.readStream(SUPERVISION_STREAM, this.version + 1)) this.follow(e);
  }

  /** Lost the lease: rounds, their timers and the watchdog stop here at once; the state keeps following the journal. */
  private stepDown(): void {
    if (this.leadingTerm === null) return;
    this.logger.warn(`no longer the supervisor lease holder (term ${this.leadingTerm}): following`);
    this.leadingTerm = null;
    this.stopPipeline();
    this.demoted$.next();
  }

  /**
   * A supervision event this node did not apply itself (another node appended it, or it was caught up): folded as replay
   * folds it; the leader then reacts, starting or stopping its rounds.
   */
  private follow(e: JournalEvent): void {
    if (e.version <= this.version) return;
    if (e.version > this.version + 1) {
      // Published while this node was not listening yet (its boot): the stream has the events between, in order.
      this.refollow().catch((err: unknown) => this.logger.error(`following the supervision stream from version ${this.version + 1} failed: ${reasonOf(err)}`));
      return;
    }
    this.version = e.version;
    this.replay(e);
    if (e.type === 'supervision.scope_set') this.sessions.excludeNewSessions(this.state.scope_mode === 'only');
    if (this.leadingTerm === null) return;
    if (!this.isOn()) {
      this.stopPipeline();
      return;
    }
    this.startPipeline();
    const enabled = e.type === 'supervision.enabled' ? (e.data as SupervisionEventMap['supervision.enabled']) : null;
    if (enabled?.round_now) this.triggers.next({ reason: SYSTEM_REASON('initial', enabled.task_hint ?? null), immediate: true });
  }

  /** One watchdog scan: stalled supervised sessions wake the main brain, each (session, kind) then cools down. */
  scanStalls(): Promise<Stall[]> {
    return this.queue.run(async () => {
      dropExpiredCooldowns(this.stallCooldowns, this.now());
      if (!this.isLeader() || !this.isOn() || !this.settings.watchdog) return [];
      const watched = this.sessions.list().map((s) => ({ ...s, supervised: s.active && !s.excluded }));
      const stalls = scanForStalls(this.now(), watched, this.stallCooldowns, this.settings.watchdog);
      const recorded: Stall[] = [];
      for (const st of stalls) {
        try {
          await this.execute({ type: 'detect_stall', session_id: st.session_id, kind: st.kind, stalled_for_s: st.stalled_for_s, cooldown_until: st.cooldown_until });
        } catch (e) {
          // Not journaled, so no wake-up (and no cooldown): the next scan finds the stall again.
          this.logger.error(`stall watchdog: ${st.alias} (${st.session_id}) has waited ${st.stalled_for_s}s in ${st.kind}, but recording the stall failed: ${reasonOf(e)}`);
          continue;
        }
        recorded.push(st);
        this.triggers.next({
          reason: wakeReason({ session_id: st.session_id, alias: st.alias, trigger: 'stall', state: st.kind, message: `waiting ${st.stalled_for_s}s in ${st.kind}` }),
        });
      }
      return recorded;
    });
  }

  stop(): void {
    this.leaseSub?.unsubscribe();
    this.busSub?.unsubscribe();
    this.stopPipeline();
    this.roundRetention.stop();
    this.stop$.next();
  }

  /** Snapshots the state once the changes queued before are applied (at shutdown: the next boot then reads no tail). */
  saveSnapshot(): Promise<void> {
    return this.queue.run(() => {
      if (this.leadingTerm !== null && this.version > this.snapshotVersion) this.snapshot();
      return this.snapshotWrites;
    });
  }

  private replay(e: JournalEvent): void {
    this.state = evolve(this.state, { type: e.type, data: e.data, at: Date.parse(e.at) });
    this.lastEventAt = Date.parse(e.at);
    this.trackSideState(e);
  }

  /**
   * Takes the state as it is now (copies: round views change as rounds end) and writes it after the snapshots before
   * it, so an earlier one never lands last. A failed write costs the next boot a longer tail, nothing else.
   */
  private snapshot(): void {
    const now = this.now();
    const state: StoredSupervision = {
      value: this.state.machine.value,
      context: this.state.machine.context,
      rounds: [...this.rounds.values()].map((round) => ({ seq: this.roundSeqs.get(round.id) ?? 0, round: { ...round } })),
      cooldowns: [...this.stallCooldowns].filter(([, until]) => until > now),
      last_event_at: this.lastEventAt,
      scope_mode: this.state.scope_mode,
    };
    const version = this.version;
    this.snapshotVersion = version;
    this.snapshotWrites = this.snapshotWrites
      .then(() => this.journal.saveSnapshot(SUPERVISION_STREAM, { version, state }))
      .catch((e: unknown) => this.logger.warn(`snapshot failed: ${(e as Error).message}`));
  }

  /** The state a snapshot holds, less the rounds whose retention has passed since and the cooldowns that ran out. */
  private restoreSnapshot(stored: StoredSupervision): void {
    this.state = { machine: supervisionMachine.resolveState({ value: stored.value, context: stored.context }), scope_mode: stored.scope_mode ?? 'all' };
    this.lastEventAt = stored.last_event_at;
    for (const [key, until] of stored.cooldowns) this.stallCooldowns.set(key, until);
    const now = this.now();
    const ended: RoundView[] = [];
    for (const { seq, round } of stored.rounds) {
      const endedAt = round.ended_at === null ? null : Date.parse(round.ended_at);
      if (endedAt !== null && pastRetention(endedAt, this.roundRetention.queue.retentionMs, now)) continue;
      const view: RoundView = { ...round, failure: round.failure ?? null };
      this.rounds.set(round.id, view);
      this.roundSeqs.set(round.id, seq);
      if (endedAt !== null) ended.push(view);
    }
    ended.sort((a, b) => Date.parse(a.ended_at as string) - Date.parse(b.ended_at as string));
    for (const r of ended) this.roundRetention.ended(r.id, Date.parse(r.ended_at as string));
  }

  private async restore(how: 'boot' | 'failover'): Promise<void> {
    if (!this.isOn() || this.version === 0) return;
    const recoverable = recoverableWorkers(this.sessions.list(), this.cluster.nodes);
    const decision = decideRestore({
      now: this.now(),
      last_seen_at: Math.max(this.lastEventAt, await this.lastActivity(how)),
      restore_ttl_s: this.settings.restore_ttl_s,
      was_enabled: true,
      recoverable_supervised_workers: recoverable,
    });
    if (!decision.restore) {
      await this.execute({ type: 'disable', reason: decision.reason === 'no_recoverable_worker' ? 'no_recoverable_worker' : 'restore_expired' });
      return;
    }
    const inFlight = this.state.machine.context.round;
    await this.execute({ type: 'resume' });
    if (!this.isOn()) return;
    this.startPipeline();
    // The interrupted round's reasons are not lost: they wake the next round.
    for (const r of inFlight?.reasons ?? []) this.triggers.next({ reason: r });
  }

  /**
   * Time of the newest event journaled before this process started (boot), or before this node took the lease
   * (failover): supervision was last known alive then. (Events this boot already wrote, such as recovered sessions, do
   * not count.)
   */
  private async lastActivity(how: 'boot' | 'failover'): Promise<number> {
    const head = how === 'boot' ? this.journal.openedHead().seq : this.journal.head().seq;
    const [newest] = head > 0 ? await this.journal.readAll(head - 1, 1) : [];
    return newest ? Date.parse(newest.at) : 0;
  }

  // ---- queries -------------------------------------------------------------------------------------

  status(): { autonomous: AutonomousView | null } {
    const c = this.state.machine.context;
    if (!c.ever_enabled) return { autonomous: null };
    return {
      autonomous: {
        enabled: this.isOn(),
        turns_used: c.turns_used,
        max_turns: c.max_turns,
        task_hint: c.task_hint,
        started_by: c.started_by,
        closed_reason: c.closed_reason,
        summary: c.summary,
        round_in_flight: c.round?.id ?? null,
        scope: this.scopeView(),
      },
    };
  }

  /**
   * What the main brain reads (supervision_status, the status resource): the state object, and before supervision
   * was ever enabled (when that object is null, as the seed has it) the scope beside it, so exclusions set already show.
   */
  brainStatus(): { autonomous: AutonomousView | null; scope?: ScopeView } {
    const status = this.status();
    return status.autonomous ? status : { ...status, scope: this.scopeView() };
  }

  /** The rounds in memory, newest first. */
  listRounds(): RoundView[] {
    return [...this.rounds.values()].reverse();
  }

  /** A page of the rounds in memory, newest first. */
  roundsPage(req: PageRequest = {}): { rounds: RoundView[]; next_cursor: string | null } {
    const page = pageOf(this.rounds.values(), (r) => this.roundSeqs.get(r.id) ?? 0, 'rounds', 'descending', req);
    return { rounds: page.items, next_cursor: page.next_cursor };
  }

  getRound(id: string): RoundView {
    const r = this.rounds.get(id);
    if (!r) {
      const s = this.settings.retention_s;
      const why = s === undefined ? '' : ` (ended rounds leave memory ${s} s after they end, BRAINSTEM_RETENTION_S; the journal keeps them, stream supervision)`;
      throw new DomainError('round_not_found', `no round ${id}${why}`);
    }
    return r;
  }

  isOn(): boolean {
    return isOn(this.state);
  }

  // ---- commands ------------------------------------------------------------------------------------

  enable(req: EnableRequest, startedBy: StartedBy, actor: string, roundNow = false): Promise<{ autonomous: AutonomousView | null }> {
    return this.queue.run(async () => {
      // Decided before the scope is set, so a refused enable changes no session; the scope takes no part in the decision.
      const cmd: SupervisionCommand = { type: 'enable', started_by: startedBy, task_hint: req.task_hint, max_turns: req.max_turns, ...(roundNow ? { round_now: true } : {}) };
      const d = decide(cmd, this.state);
      if (d.error) throw new DomainError(d.error.code, d.error.message);
      if (req.scope_mode) await this.applyScope(req.scope_mode, req.scope_session_ids ?? [], actor);
      await this.execute(cmd);
      if (this.isLeader()) this.startPipeline();
      return this.status();
    });
  }

  /** POST autonomous (the UI switch): on behaves as enable_supervision; off accepts nothing else. */
  setAutonomous(req: { enabled: boolean; task_hint?: string; max_turns?: number }, actor: string): Promise<{ autonomous: AutonomousView | null }> {
    if (req.enabled) return this.enable({ task_hint: req.task_hint, max_turns: req.max_turns }, 'user', actor);
    const extra = (['task_hint', 'max_turns'] as const).filter((k) => req[k] !== undefined);
    if (extra.length) throw new DomainError('invalid_input', `${extra.join(', ')}: to turn supervision off send only enabled=false`);
    return this.disable('disabled');
  }

  disable(reason: ClosedReason, summary?: string): Promise<{ autonomous: AutonomousView | null }> {
    return this.queue.run(async () => {
      await this.execute({ type: 'disable', reason, summary });
      return this.status();
    });
  }

  /** finish_supervision: off, with the wrap-up. */
  finish(summary?: string): Promise<{ autonomous: AutonomousView | null }> {
    return this.queue.run(async () => {
      await this.execute({ type: 'finish', summary });
      return this.status();
    });
  }

  /**
   * /supervise [goal]: enable with the goal as task_hint and run one round at once. Taken by a follower, the supervisor
   * runs that round when it folds the enable (round_now).
   */
  async supervise(goal: string | undefined, actor: string): Promise<{ autonomous: AutonomousView | null }> {
    const view = await this.enable(goal ? { task_hint: goal } : {}, 'user', actor, true);
    if (this.isLeader()) this.triggers.next({ reason: SYSTEM_REASON('initial', goal ?? null), immediate: true });
    return view;
  }

  setScope(mode: ScopeMode, ids: readonly string[], actor: string): Promise<ScopeResult> {
    return this.queue.run(() => this.applyScope(mode, ids, actor));
  }

  completeRound(id: string, summary?: string): Promise<RoundView> {
    return this.queue.run(async () => {
      await this.execute({ type: 'complete_round', round_id: id, summary, known: this.getRound(id).status });
      return this.getRound(id);
    });
  }

  /** A wake-up from outside the session events (the stall watchdog). */
  wake(reason: WakeReason): void {
    if (this.isLeader() && this.isOn()) this.triggers.next({ reason });
  }

  // ---- internals -----------------------------------------------------------------------------------


  private async applyScope(mode: ScopeMode, ids: readonly string[], actor: string): Promise<ScopeResult> {
    const plan = planScope(mode, ids, this.sessions.list());
    for (const c of plan.changes) await this.sessions.setExcluded(c.id, c.excluded, actor);
    // invert flips the sessions named and leaves the rule for sessions created later as it was.
    if ((await this.execute({ type: 'set_scope', mode })).length) this.sessions.excludeNewSessions(mode === 'only');
    return { mode, ...this.scopeLists(), unknown_ids: plan.unknown_ids };
  }

  private scopeView(): ScopeView {
    return { mode: this.state.scope_mode, ...this.scopeLists() };
  }

  private scopeLists(): { supervised: string[]; excluded: string[] } {
    const active = this.sessions.list().filter((s) => s.active);
    return { supervised: active.filter((s) => !s.excluded).map((s) => s.id), excluded: active.filter((s) => s.excluded).map((s) => s.id) };
  }

  /**
   * decide → append → fold; a close stops the wake pipeline. Answers the events journaled. Decided against a state
   * another node had moved on from (a conflict), it is decided again once caught up. Only the leader decides the
   * commands of its own logic.
   */
  private async execute(cmd: SupervisionCommand): Promise<SupervisionJournalEvent[]> {
    if (LEADER_ONLY.has(cmd.type) && !this.isLeader()) throw new DomainError('not_supervisor', `${cmd.type}: this node does not hold the supervisor lease`);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.commit(decide(cmd, this.state));
      } catch (e) {
        if (!(e instanceof JournalConflictError && e.stream === SUPERVISION_STREAM) || attempt > CONFLICT_RETRIES) throw e;
        await this.refollow();
      }
    }
  }

  /** Throws a refusal; else journals the events and folds them in. */
  private async commit(d: SupervisionDecision): Promise<SupervisionJournalEvent[]> {
    if (d.error) throw new DomainError(d.error.code, d.error.message);
    await this.append(d.events);
    if (d.events.some((e) => e.type === 'supervision.disabled')) this.stopPipeline();
    return d.events;
  }

  /** Journals the events together, and folds them in before they are published. */
  private async append(events: readonly SupervisionJournalEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.bus.emit(SUPERVISION_STREAM, events as never, {
      expectedVersion: this.version,
      fence: this.fence(),
      apply: ({ events: stored }) => {
        for (const e of stored) {
          this.version = e.version;
          this.replay(e);
        }
      },
    });
    if (this.leadingTerm !== null && this.version - this.snapshotVersion >= Math.max(SNAPSHOT_EVERY, this.rounds.size)) this.snapshot();
  }

  /**
   * The leader's appends are fenced by its term: once another node holds the lease, none of them is written. Undefined
   * while following. The hosted brain's appends carry it too.
   */
  fence(): Fence | undefined {
    return this.leadingTerm === null ? undefined : { lease: SUPERVISOR_LEASE_NAME, holder: this.cluster.lease.holder, term: this.leadingTerm };
  }

  /** Rounds and stall cooldowns: what the journal records beside the machine state. */
  private trackSideState(e: JournalEvent): void {
    const d = e.data as Record<string, unknown>;
    if (e.type === 'supervision.stall_detected') {
      const st = d as unknown as SupervisionEventMap['supervision.stall_detected'];
      this.stallCooldowns.set(cooldownKey(st.session_id, st.kind as Stall['kind']), st.cooldown_until);
      return;
    }
    if (e.type === 'round.started') {
      const { round } = d as unknown as SupervisionEventMap['round.started'];
      const c = this.state.machine.context;
      const prompt = roundPrompt({
        round_id: round.id,
        reasons: round.reasons,
        evidence: round.evidence,
        task_hint: c.task_hint,
        turns_used: c.turns_used,
        max_turns: c.max_turns,
      });
      this.roundSeqs.set(round.id, e.seq);
      this.rounds.set(round.id, {
        id: round.id,
        turn: c.turns_used,
        status: 'in_flight',
        started_at: new Date(round.started_at).toISOString(),
        deadline_at: new Date(round.deadline_at).toISOString(),
        ended_at: null,
        reasons: round.reasons,
        prompt,
        summary: null,
        failure: null,
      });
      return;
    }
    if (e.type === 'supervision.disabled') {
      // Journals written before close() interrupted the round in flight: the view ends it all the same.
      for (const r of this.rounds.values()) if (r.status === 'in_flight') this.endRoundView(r, 'interrupted', e.at);
      return;
    }
    const status: RoundOutcome | undefined = Object.hasOwn(ROUND_OUTCOME, e.type) ? ROUND_OUTCOME[e.type as RoundEndType] : undefined;
    const r = status && this.rounds.get(d.round_id as string);
    if (r) this.endRoundView(r, status, e.at, typeof d.summary === 'string' ? d.summary : null, status === 'failed' ? String(d.reason) : null);
  }

  private endRoundView(r: RoundView, status: RoundOutcome, at: string, summary: string | null = null, failure: string | null = null): void {
    r.status = status;
    r.ended_at = at;
    r.summary = summary;
    r.failure = failure;
    this.roundRetention.ended(r.id, Date.parse(at));
    const ended = this.roundEnded.get(r.id);
    ended?.next(status);
    ended?.complete();
    this.roundEnded.delete(r.id);
  }

  private startPipeline(): void {
    if (this.pipeline || !this.isLeader()) return;
    this.pipeline = wakeRounds(this.triggers, (batch) => this.runRound(batch.map((t) => t.reason)), {
      debounceMs: this.settings.debounce_ms,
      key: (t) => `${t.reason.session_id}:${t.reason.trigger}`,
      immediate: (t) => !!t.immediate,
    }).subscribe();
  }

  private stopPipeline(): void {
    this.pipeline?.unsubscribe();
    this.pipeline = null;
    for (const s of this.roundEnded.values()) s.complete();
    this.roundEnded.clear();
  }

  /** One round: journaled start, delivered as an event, ended by completion, timeout or close. */
  private runRound(reasons: WakeReason[]): Observable<unknown> {
    return defer(() =>
      from(
        this.queue.run(async () => {
          const at = this.now();
          const round: RoundInFlight = {
            id: `rd_${this.newId()}`,
            started_at: at,
            deadline_at: at + this.settings.round_timeout_s * 1000,
            reasons,
            evidence: this.evidenceOf(reasons),
          };
          const d = decide({ type: 'start_round', round }, this.state);
          // The pipeline can fire as supervision closes, or while a round is in flight: there is nothing to start then.
          if (d.error?.code === 'supervision_off' || d.error?.code === 'round_in_flight') return null;
          await this.commit(d);
          const ended = new Subject<RoundEnding>();
          this.roundEnded.set(round.id, ended);
          return { round, ended };
        }).catch((e: unknown) => {
          const why = reasons.map((r) => (r.session_id === '-' ? r.trigger : `${r.trigger} from ${r.alias} (${r.session_id})`)).join(', ');
          this.logger.error(`a round to wake the brain for ${why} could not start: ${reasonOf(e)}`);
          return null;
        }),
      ),
    ).pipe(
      switchMap((started) => {
        if (!started) return [];
        const id = started.round.id;
        timer(Math.max(0, started.round.deadline_at - this.now()))
          .pipe(takeUntil(started.ended), takeUntil(this.stop$), takeUntil(this.demoted$))
          .subscribe(() => {
            this.timeoutRound(id).catch((e: unknown) => this.logger.error(`round ${id}: its deadline passed, but recording the timeout failed: ${reasonOf(e)}`));
          });
        this.deliver(id, started.ended);
        return started.ended;
      }),
    );
  }

  /**
   * Hands the round to the driver; a driver that ends the round itself completes it, and a failure ends it as failed, logged.
   * Once the signal is aborted the round has ended otherwise (or the service is stopping, and the journal keeps it in
   * flight for the restart): what the driver answers then is not recorded.
   */
  private deliver(id: string, ended: Observable<RoundEnding>): void {
    const abort = new AbortController();
    // Ended without a status: the service is stopping, and the journal still has the round in flight.
    let how: RoundEnding = 'interrupted';
    const sub = ended.subscribe({ next: (status) => (how = status), complete: () => abort.abort(how) });
    const driver = this.driver.name;
    this.driver
      .deliver(this.getRound(id), abort.signal)
      .then(
        (result) => {
          if (result && !abort.signal.aborted) return this.endDelivered(id, () => this.completeRound(id, result.summary), `the ${driver} brain ended it`);
        },
        (e: unknown) => {
          if (abort.signal.aborted) return;
          const failure = `delivery to the main brain failed (${driver}): ${reasonOf(e)}`;
          this.logger.warn(`round ${id}: ${failure}`);
          return this.endDelivered(id, () => this.failRound(id, failure), 'its delivery failed');
        },
      )
      .finally(() => sub.unsubscribe());
  }

  /** Each woken session's last turn result or output tail, once per session, taken as the round starts (and journaled with it). */
  private evidenceOf(reasons: readonly WakeReason[]): WorkerEvidence[] {
    const ids = new Set(reasons.map((r) => r.session_id).filter((id) => id !== '-'));
    const evidence: WorkerEvidence[] = [];
    for (const id of ids) {
      const s = this.sessions.get(id);
      if (s) evidence.push(workerEvidence(s, (lines) => this.sessions.outputTail(id, lines)));
    }
    return evidence;
  }

  private async endDelivered(id: string, end: () => Promise<unknown>, what: string): Promise<void> {
    try {
      await end();
    } catch (e) {
      // Ended meanwhile (complete_round, a timeout, a close): there is nothing left to record.
      if (this.rounds.get(id)?.status !== 'in_flight') return;
      this.logger.error(`round ${id}: ${what}, but recording its end failed: ${reasonOf(e)}`);
    }
  }

  /** Ends a round whose delivery failed; like any round end it releases the lock, and the turn stays used. */
  private failRound(id: string, reason: string): Promise<void> {
    return this.queue.run(async () => {
      await this.execute({ type: 'fail_round', round_id: id, reason, known: this.rounds.get(id)?.status ?? null });
    });
  }

  private timeoutRound(id: string): Promise<void> {
    return this.queue.run(async () => {
      await this.execute({ type: 'time_out_round', round_id: id });
    });
  }

  private async onSessionEvent(e: JournalEvent): Promise<void> {
    if (!this.isLeader() || !this.isOn()) return;
    const what = classifySessionEvent(e, (id) => this.sessions.get(id));
    if (!what) return;
    if (what.kind === 'wake') {
      this.triggers.next({ reason: what.reason });
      return;
    }
    // The directory has applied every event published so far (exits committed together included).
    const others = this.sessions.list().filter((s) => s.active && !s.excluded);
    if (others.length > 0) this.triggers.next({ reason: what.reason });
    else {
      await this.disable('converged').catch((err: unknown) =>
        this.logger.error(`${what.reason.alias} (${what.reason.session_id}) exited and no supervised worker is left, but closing supervision (converged) failed: ${reasonOf(err)}`),
      );
    }
  }
}
