import { Logger } from '@nestjs/common';
import { Observable, Subscription, defer, finalize } from 'rxjs';
import { EventBus } from '../bus/event-bus';
import { DomainError } from '../common/domain-error';
import { PageRequest, pageOf } from '../common/page';
import { SerialQueue } from '../common/serial-queue';
import { SseMessage, SseResume, sseEvents } from '../journal/audit';
import { Fence, Journal, JournalEvent } from '../journal/journal.port';
import { uncoveredAttention } from './attention';
import { RoundDriver, streamDriver } from './round-driver.port';
import { OUTPUT_ELSEWHERE_WAIT_MS, SinceRound, newRound, wokenIds } from './round-evidence';
import { SinceLog, emptySince, noteSince, sinceLastRound, sinceLine } from './round-facts';
import { EVIDENCE_TAIL_LINES } from './round-prompt';
import { RoundRunner } from './round-runner';
import { RoundView } from './round.view';
import { SessionDirectory } from './session-directory.port';
import { LoopEscalation, LoopHeldListener } from './loop-escalation';
import { StallScanner } from './stall-scanner';
import { Stall } from './stall-watchdog';
import { reasonOf } from './supervision-log';
import { ExternalInclusion, ScopeMode, planScope } from './supervision-scope';
import { EnableRequest, SupervisionCluster, SupervisionSettings, soleSupervision } from './supervision.settings';
import { scopeExclusionWrites } from './supervision-scope-writes';
import { ScopeRequest, SupervisionCommand, SupervisionJournalEvent, decide, isOn } from './supervision.decider';
import { roundNotFound } from './supervision.errors';
import { ROUND_OUTCOME, RoundEndType, SupervisionEventMap } from './supervision.events';
import { ClosedReason, StartedBy, WakeReason, wakeReason } from './supervision.machine';
import { SUPERVISION_STREAM, SupervisionStore } from './supervision.store';
import { AutonomousView, ScopeResult, ScopeView, autonomousView, scopeLists, scopeView } from './supervision.view';
import { SupervisorLeadership } from './supervisor-leadership';
import { classifySessionEvent } from './wake-triggers';

export type { AutonomousView, ScopeResult, ScopeView } from './supervision.view';

export { SUPERVISION_STREAM } from './supervision.store';

/** The events of GET /session-os/main-brain/rounds/stream. */
export const isRoundEvent = (e: JournalEvent): boolean => e.stream === SUPERVISION_STREAM && e.type.startsWith('round.');

export { soleSupervision } from './supervision.settings';
export type { EnableRequest, SupervisionCluster, SupervisionSettings } from './supervision.settings';

/** Commands only the lease holder's own logic makes: a follower never decides them. */
const LEADER_ONLY = new Set<SupervisionCommand['type']>(['start_round', 'time_out_round', 'fail_round', 'resume', 'detect_stall', 'take_loop']);

/** The most journal events read for what happened since the round before: the newest, when there were more. */
const SINCE_READ_MAX = 2000;

const SYSTEM_REASON = (trigger: string, message: string | null = null): WakeReason => wakeReason({ session_id: '-', alias: '-', trigger, state: null, message });

/**
 * Supervision on this node: loads its state (SupervisionStore), takes commands and answers queries. Every change is a
 * command decided against the state (supervision.decider.ts) on the one command path: its events are journaled on
 * stream `supervision` at the stream's version, then folded in; replay folds the journal the same way. Commands are
 * serialised, so REST, tools, triggers and timeouts never interleave. Every node folds the events the others append;
 * the lease holder (SupervisorLeadership) runs the rounds (RoundRunner) and the stall watchdog (StallScanner).
 */
export class SupervisionService {
  private readonly queue = new SerialQueue();
  private readonly logger = new Logger('supervision');
  private readonly store: SupervisionStore;
  private readonly leadership: SupervisorLeadership;
  private readonly runner: RoundRunner;
  private readonly watchdog: StallScanner;
  private readonly loops: LoopEscalation;
  private readonly nodes: SupervisionCluster['nodes'];
  private questionSeq: (sessionId: string) => number | null = () => null;
  /** What others did since the last round this node started (null while it has started none since it led). */
  private since: { round_id: string; log: SinceLog } | null = null;
  private busSub: Subscription | null = null;
  /** Clients following the rounds stream on this node now (a brain the user brings, with the stream driver). */
  private listeners = 0;
  private readonly sessionOf = (id: string) => this.sessions.get(id);

  constructor(
    private readonly bus: EventBus,
    private readonly journal: Journal,
    private readonly sessions: SessionDirectory,
    private readonly settings: SupervisionSettings,
    private readonly now: () => number,
    private readonly newId: () => string,
    private driver: RoundDriver = streamDriver,
    cluster: SupervisionCluster = soleSupervision(),
  ) {
    this.nodes = cluster.nodes;
    this.nodes.reportRoundListeners(() => this.listeners);
    const retentionMs = settings.retention_s === undefined ? Infinity : settings.retention_s * 1000;
    this.store = new SupervisionStore(journal, this.queue, { retentionMs, now, log: this.logger }, (e) => this.react(e));
    this.runner = new RoundRunner(
      {
        start: (reasons) => this.startRound(reasons),
        complete: (id, summary) => this.completeRound(id, summary),
        fail: (id, reason) => this.queue.run(() => this.execute({ type: 'fail_round', round_id: id, reason })),
        timeOut: (id) => this.queue.run(() => this.execute({ type: 'time_out_round', round_id: id })),
        status: (id) => this.store.current.rounds.get(id)?.view.status ?? null,
      },
      () => this.driver,
      { debounce_ms: settings.debounce_ms, now },
      this.logger,
    );
    this.leadership = new SupervisorLeadership(
      { lease: cluster.lease, nodes: cluster.nodes, journal, sessions, restore_ttl_s: settings.restore_ttl_s, now, queue: this.queue, log: this.logger },
      {
        catchUp: () => this.store.refollow(),
        current: () => this.store.stream.current(),
        execute: (cmd) => this.execute(cmd),
        resumed: (reasons, kept) => {
          // A round kept for the brain that follows it holds the next one back until it ends, its deadline re-armed here.
          this.runner.start(kept ? (this.store.current.rounds.get(kept.id)?.view ?? null) : null);
          // The interrupted round's reasons are not lost: they wake the next round, with every session waiting now
          // that no round covered (a trigger the leaderless window swallowed included).
          for (const r of reasons) this.runner.trigger(r);
          this.wakeForAttention();
        },
        roundListeners: () => this.listeners,
        steppedDown: () => {
          this.since = null;
          this.runner.stop();
        },
      },
    );
    this.watchdog = new StallScanner(
      { config: settings.watchdog, sessions, queue: this.queue, now, log: this.logger },
      {
        watching: () => this.leadership.isLeader() && this.isOn(),
        cooldowns: () => this.store.current.cooldowns,
        record: ({ session_id, kind, stalled_for_s, cooldown_until }) => this.execute({ type: 'detect_stall', session_id, kind, stalled_for_s, cooldown_until }),
        wake: (reason) => this.runner.trigger(reason),
      },
    );
    this.loops = new LoopEscalation(
      sessions,
      {
        take: ({ reason, pattern, signature, escalate_after }) =>
          this.queue.run(() => this.execute({ type: 'take_loop', session_id: reason.session_id, pattern, signature, escalate_after })),
        wake: (reason) => this.runner.trigger(reason),
      },
      this.logger,
    );
  }

  /** Who asks the user about a session held for a loop that persisted: the main brain's human gate. */
  onLoopHeld(listener: LoopHeldListener): void {
    this.loops.onHeld(listener);
  }

  /** Where a session's open question is in the main chat (its seq), set by the main-brain module: rounds name it. */
  useQuestions(seqOf: (sessionId: string) => number | null): void {
    this.questionSeq = seqOf;
  }

  /** How rounds reach the main brain, set by the main-brain module before supervision starts. */
  useDriver(driver: RoundDriver): void {
    this.driver = driver;
  }

  /** The driver rounds go to (GET /main-brain/conversation names it). */
  get driverName(): string {
    return this.driver.name;
  }

  /** How many clients follow the rounds stream on this node now. */
  get roundListeners(): number {
    return this.listeners;
  }

  /**
   * GET …/rounds/stream: the round events, resumable by seq; each client following it is counted while it does. A
   * round.started carries the round's prompt beside the event (null once the round has left memory): a brain that
   * follows the stream needs nothing else to start working.
   */
  roundStream(resume: SseResume): Observable<SseMessage> {
    return defer(() => {
      this.listeners++;
      return sseEvents(this.journal, resume, isRoundEvent, (e) => this.withPrompt(e)).pipe(finalize(() => this.listeners--));
    });
  }

  /** A round.started with its round's prompt as folded here (every node folds it before its stream sends it); other events as they are. */
  private withPrompt(e: JournalEvent): JournalEvent {
    if (e.type !== 'round.started') return e;
    const id = (e.data as SupervisionEventMap['round.started'] | null)?.round?.id;
    const started: JournalEvent & { prompt: string | null } = { ...e, prompt: (id && this.store.current.rounds.get(id)?.view.prompt) || null };
    return started;
  }

  /** Rebuilds from the journal, then follows it; holding the lease, it leads. */
  async start(): Promise<void> {
    await this.store.load();
    this.followScopeRules();
    this.busSub = this.bus.events$.subscribe((e) => {
      if (e.stream === SUPERVISION_STREAM) this.store.follow(e as unknown as JournalEvent);
      else if (e.type.startsWith('session.') || e.type === 'worktree.conflict_predicted') this.onSessionEvent(e as unknown as JournalEvent);
      if (this.since) this.noteSince(e as unknown as JournalEvent);
    });
    this.watchdog.start();
    await this.leadership.start();
  }

  stop(): void {
    this.leadership.stop();
    this.busSub?.unsubscribe();
    this.watchdog.stop();
    this.runner.stop();
    this.store.stop();
  }

  /** Snapshots the state once the changes queued before are applied (at shutdown: the next boot then reads no tail). */
  saveSnapshot(): Promise<void> {
    return this.store.saveSnapshot(this.leadership.leading);
  }

  /**
   * The leader's appends are fenced by its term: once another node holds the lease, none of them is written. Undefined
   * while following. The hosted brain's appends carry it too.
   */
  fence(): Fence | undefined {
    return this.leadership.fence();
  }

  // ---- commands ------------------------------------------------------------------------------------

  /** Enables supervision; a scope given is set in the same decision, its sessions' exclusions written with it. */
  enable(req: EnableRequest, startedBy: StartedBy, actor: string, roundNow = false): Promise<{ autonomous: AutonomousView | null }> {
    const { task_hint, max_turns, scope_mode } = req;
    return this.command(
      () => ({
        type: 'enable',
        started_by: startedBy,
        task_hint,
        max_turns,
        ...(roundNow ? { round_now: true } : {}),
        ...(scope_mode ? { scope: this.scopeRequest(scope_mode, req.scope_session_ids ?? []) } : {}),
      }),
      actor,
    );
  }

  /**
   * POST autonomous (the UI switch): on behaves as enable_supervision, and `include_external: true` (the user's choice)
   * brings the external sessions in, now and when they report later; off accepts nothing else.
   */
  setAutonomous(
    req: { enabled: boolean; task_hint?: string; max_turns?: number; include_external?: boolean },
    actor: string,
  ): Promise<{ autonomous: AutonomousView | null }> {
    if (req.enabled) {
      const { task_hint, max_turns, include_external } = req;
      return this.command(() => ({ type: 'enable', started_by: 'user', task_hint, max_turns, ...(include_external ? { include_external: true } : {}) }), actor);
    }
    const extra = (['task_hint', 'max_turns', 'include_external'] as const).filter((k) => req[k] !== undefined);
    if (extra.length) throw new DomainError('invalid_input', `${extra.join(', ')}: to turn supervision off send only enabled=false`);
    return this.disable('disabled');
  }

  disable(reason: ClosedReason, summary?: string): Promise<{ autonomous: AutonomousView | null }> {
    return this.command({ type: 'disable', reason, summary });
  }

  /** finish_supervision: off, with the wrap-up. */
  finish(summary?: string): Promise<{ autonomous: AutonomousView | null }> {
    return this.command({ type: 'finish', summary });
  }

  /** /supervise [goal]: enable with the goal as task_hint, and the supervisor runs one round at once (whichever node took it). */
  supervise(goal: string | undefined, actor: string): Promise<{ autonomous: AutonomousView | null }> {
    return this.enable(goal ? { task_hint: goal } : {}, 'user', actor, true);
  }

  /**
   * Sets the scope: the sessions' exclusions it changes are written with supervision's event, atomically. External
   * sessions join only by the user's choice: `external` is `named` for the user's requests (those they name may join),
   * with `include_external` (true: all of them, now and later); the main brain's requests bring none in.
   */
  setScope(mode: ScopeMode, ids: readonly string[], actor: string, external: { externals: ExternalInclusion; include_external?: boolean } = { externals: 'none' }): Promise<ScopeResult> {
    return this.queue.run(async () => {
      await this.execute(() => ({ type: 'set_scope', scope: { ...this.scopeRequest(mode, ids), ...external } }), actor);
      const plan = planScope(mode, ids, this.sessions.list(), external.include_external ? 'all' : external.externals);
      return { mode, ...scopeLists(this.sessions.list()), unknown_ids: 'error' in plan ? [] : plan.unknown_ids };
    });
  }

  completeRound(id: string, summary?: string): Promise<RoundView> {
    return this.queue.run(async () => {
      await this.execute({ type: 'complete_round', round_id: id, summary }).catch((e: unknown) => {
        throw e instanceof DomainError && e.code === 'round_not_found' ? roundNotFound(id, this.settings.retention_s) : e;
      });
      return this.getRound(id);
    });
  }

  /** One watchdog scan: stalled supervised sessions wake the main brain, each (session, kind) then cools down. */
  scanStalls(): Promise<Stall[]> {
    return this.watchdog.scan();
  }

  // ---- queries -------------------------------------------------------------------------------------

  status(): { autonomous: AutonomousView | null } {
    return autonomousView(this.store.current, this.sessions.list());
  }

  /**
   * What the main brain reads (supervision_status, the status resource): the state object, and before supervision
   * was ever enabled (when that object is null) the scope beside it, so exclusions set already show.
   */
  brainStatus(): { autonomous: AutonomousView | null; scope?: ScopeView } {
    const status = this.status();
    return status.autonomous ? status : { ...status, scope: scopeView(this.store.current, this.sessions.list()) };
  }

  /** The rounds in memory, newest first. */
  listRounds(): RoundView[] {
    return [...this.store.current.rounds.values()].map((r) => r.view).reverse();
  }

  /** A page of the rounds in memory, newest first. */
  roundsPage(req: PageRequest = {}): { rounds: RoundView[]; next_cursor: string | null } {
    const page = pageOf(this.store.current.rounds.values(), (r) => r.seq, 'rounds', 'descending', req);
    return { rounds: page.items.map((r) => r.view), next_cursor: page.next_cursor };
  }

  getRound(id: string): RoundView {
    const r = this.findRound(id);
    if (!r) throw roundNotFound(id, this.settings.retention_s);
    return r;
  }

  /** A round in memory, or null (never one, or past retention). */
  findRound(id: string): RoundView | null {
    return this.store.current.rounds.get(id)?.view ?? null;
  }

  isOn(): boolean {
    return isOn(this.store.current);
  }

  // ---- internals -----------------------------------------------------------------------------------

  private command(cmd: SupervisionCommand | (() => SupervisionCommand), actor?: string): Promise<{ autonomous: AutonomousView | null }> {
    return this.queue.run(async () => {
      await this.execute(cmd, actor);
      return this.status();
    });
  }

  /**
   * The command path: decided against the state (a command given as a function is built again for each decision, with
   * the sessions as they are then), appended at the stream's version (fenced by the lease term while leading) with the
   * sessions' exclusions a scope changes, applied, published, then reacted to. Only the leader decides the commands of
   * its own logic. Call inside the queue.
   */
  private async execute(command: SupervisionCommand | (() => SupervisionCommand), actor = 'brainstem'): Promise<readonly SupervisionJournalEvent[]> {
    const build = typeof command === 'function' ? command : () => command;
    let cmd = build();
    if (LEADER_ONLY.has(cmd.type) && !this.leadership.isLeader()) throw new DomainError('not_supervisor', `${cmd.type}: this node does not hold the supervisor lease`);
    return this.store.execute(
      (s) => decide((cmd = build()), s),
      {
        fence: this.leadership.fence(),
        alongside: (decided) => (decided.some((e) => e.type === 'supervision.scope_set') ? scopeExclusionWrites(cmd, this.sessions, actor) : []),
      },
      this.leadership.leading,
    );
  }

  private scopeRequest(mode: ScopeMode, ids: readonly string[]): ScopeRequest {
    return { mode, session_ids: ids, sessions: this.sessions.list() };
  }

  /**
   * What a folded event means here, whoever appended it: the rule for sessions created later, a round's end (its
   * delivery stops), and for the leader, whether rounds run and whether one starts at once (/supervise).
   */
  private react(e: JournalEvent): void {
    if (e.type === 'supervision.scope_set') this.followScopeRules();
    // From a round the leader started, what others do is noted as it is published, for the next round.
    if (e.type === 'round.started' && this.leadership.isLeader()) this.since = { round_id: (e.data as unknown as SupervisionEventMap['round.started']).round.id, log: emptySince() };
    if (Object.hasOwn(ROUND_OUTCOME, e.type)) this.runner.ended((e.data as { round_id: string }).round_id, ROUND_OUTCOME[e.type as RoundEndType]);
    if (!this.isOn()) return this.runner.stop();
    if (!this.leadership.isLeader()) return;
    const wasRunning = this.runner.running;
    this.runner.start();
    const enabled = e.type === 'supervision.enabled' ? (e.data as SupervisionEventMap['supervision.enabled']) : null;
    // Turned on (by any path: the switch, the tool, /supervise, a workflow): the sessions waiting already wake the
    // first round. /supervise's round, which starts at once, takes them with it.
    if (enabled && (!wasRunning || enabled.round_now)) this.wakeForAttention();
    if (enabled?.round_now) this.runner.trigger(SYSTEM_REASON('initial', enabled.task_hint ?? null), true);
  }

  /**
   * Every supervised session that waits on someone now and that no round covered since it began is a trigger, merged
   * with the others within the debounce: at switch-on and at a takeover, what a round already showed the brain does not
   * wake it again.
   */
  private wakeForAttention(): void {
    for (const r of uncoveredAttention(this.sessions.list(), this.store.current.covered)) this.runner.trigger(r);
  }

  /** The rules for sessions created later, as the sessions apply them: scope `only`, and include_external. */
  private followScopeRules(): void {
    this.sessions.excludeNewSessions(this.store.current.scope_mode === 'only');
    this.sessions.includeNewExternalSessions(this.store.current.include_external);
  }

  /**
   * One round for these reasons, started on the command path (its view, or null when none starts: also when every
   * reason was resolved before it could start). Output other nodes keep, and what happened since the round before, are
   * read first, outside the queue (a slow node holds up no command).
   */
  private async startRound(reasons: WakeReason[]): Promise<RoundView | null> {
    const [elsewhere, since] = await Promise.all([this.sessions.outputTailsElsewhere(wokenIds(reasons), EVIDENCE_TAIL_LINES, OUTPUT_ELSEWHERE_WAIT_MS), this.sinceLastRound()]);
    return this.queue.run(async () => {
      const term = this.leadership.fence()?.term;
      // Who runs it, and how it reaches the brain: a node taking the lease tells from them whether anyone still drives it.
      const round = {
        ...newRound(`rd_${this.newId()}`, reasons, this.now(), this.settings.round_timeout_s, this.sessions, { elsewhere, since, questionSeq: this.questionSeq, coveredAt: (id) => this.store.current.covered.get(id)?.at }),
        node: this.nodes.self,
        ...(term !== undefined ? { term } : {}),
        driver: this.driver.name,
      };
      // Everything it was woken for was resolved meanwhile: nothing to show the brain, and no turn spent on it.
      if (round.reasons.length === 0) return null;
      try {
        await this.execute({ type: 'start_round', round });
      } catch (e) {
        // The pipeline can fire as supervision closes, or while a round is in flight: there is nothing to start then.
        if (e instanceof DomainError && (e.code === 'supervision_off' || e.code === 'round_in_flight')) return null;
        throw e;
      }
      return this.store.current.rounds.get(round.id)?.view ?? null;
    });
  }

  /**
   * What the user and the rest of Brainstem did since the round before started: noted as it is published since this
   * node started a round; else (the first round after a takeover) read from the journal, its newest SINCE_READ_MAX
   * events at most. Null before the first round (there is no "since" yet), or when the read fails (the round starts
   * all the same).
   */
  private async sinceLastRound(): Promise<SinceRound | null> {
    if (this.since) return { round_id: this.since.round_id, ...this.since.log };
    const last = [...this.store.current.rounds.values()].at(-1);
    if (!last) return null;
    const after = Math.max(last.seq, this.journal.head().seq - SINCE_READ_MAX);
    try {
      const events = await this.journal.readAll(after, SINCE_READ_MAX);
      return { round_id: last.view.id, ...sinceLastRound(events, this.sessionAlias) };
    } catch (e) {
      this.logger.warn(`what happened since round ${last.view.id} could not be read: ${reasonOf(e)}`);
      return null;
    }
  }

  private noteSince(e: JournalEvent): void {
    const line = sinceLine(e, this.sessionAlias);
    if (line && this.since) this.since = { round_id: this.since.round_id, log: noteSince(this.since.log, line) };
  }

  private readonly sessionAlias = (id: string): string | undefined => this.sessions.get(id)?.alias;

  /**
   * A session event wakes the brain, or (a worker's exit with no supervised worker left) closes supervision as
   * converged. Synchronous for a wake (a burst brings a thousand): what fails, now or later, is logged.
   */
  private onSessionEvent(e: JournalEvent): void {
    const failed = (err: unknown) => this.logger.error(`${e.type} of ${e.stream} (seq ${e.seq}) not handled: ${reasonOf(err)}`);
    try {
      if (!this.leadership.isLeader() || !this.isOn()) return;
      const what = classifySessionEvent(e, this.sessionOf);
      if (!what) return;
      if (what.kind === 'loop') return void this.loops.take(what).catch(failed);
      // The directory has applied every event published so far (exits committed together included).
      if (what.kind === 'wake') return this.runner.trigger(what.reason);
      // A stop someone asked for is no news to wake the brain for: the next round says it under "Since round …".
      if (this.sessions.list().some((s) => s.active && !s.excluded)) return what.requested ? undefined : this.runner.trigger(what.reason);
      this.disable('converged').catch((err: unknown) =>
        this.logger.error(`${what.reason.alias} (${what.reason.session_id}) exited and no supervised worker is left, but closing supervision (converged) failed: ${reasonOf(err)}`),
      );
    } catch (err) {
      failed(err);
    }
  }
}
