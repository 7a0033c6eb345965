import { OnApplicationBootstrap, OnApplicationShutdown, OnModuleDestroy } from '@nestjs/common';
import { Observable } from 'rxjs';
import { WorkerSessions } from '../auth/worker-sessions.port';
import { DomainError } from '../common/domain-error';
import { pageOf } from '../common/page';
import { SessionDirectory, SessionFacts, SessionView } from '../supervision/session-directory.port';
import { SessionContext } from './session.context';
import { SessionActor } from './session.actor';
import { CommandBody, SessionCommands } from './session.commands';
import { SessionCommand, decide } from './session.decider';
import { CreateSessionDto, DiffQueryDto, ListSessionsQueryDto, Signal, parseSignal } from './session.dto';
import { HoldReason, JsonObject, MessageVia, NetworkScope, Pending, PermissionDecision, SessionFact, pendingPermission } from './session.events';
import { profileHostRule } from './network-hosts';
import { SessionNetwork } from './session-network';
import { attentionSince } from './session.machine';
import { DEFAULT_TAIL, OutputStreamMessage, SessionOutput } from './session-output';
import { OutputTail, SessionOutputReads } from './session-output-reads';
import { IdGenerator } from './session.ports';
import { SessionRegistry, aliasNumber } from './session.registry';
import { SessionSetup } from './session-setup';
import { SessionStatus, toStatus } from './session.status';
import { workTreeWarnings } from './session-warnings';
import { SessionWorkers } from './session-workers';
import { SessionParking } from './session-parking';
import { WorktreeOp } from './session-worktree';
import { SessionDiff, SessionWorktrees } from './session-worktrees';
import { DEFAULT_DIFF_LINES, decodeCursor } from '../worktrees/diff-page';
import { normalRelativePath, relativePathProblem } from '../common/relative-path';
import { MergeStrategy } from '../worktrees/merge-plan';
import { SessionSpending } from './session-spending';
import { Budget } from '../usage/budget.rules';
import { budgetOf } from '../usage/budget.dto';
import { ExternalSessions } from './external-sessions';
import { ProcessRunner } from './runtimes/process-runner';

export { OutputStreamMessage } from './session-output';

export const DEFAULT_STOP_GRACE_MS = 5000;

/** What a session's pending says it waits on, as supervision reads it. */
function waitingOn(p: Pending | null): SessionView['waiting_on'] {
  if (p === null) return null;
  if (p.kind === 'question') return { kind: 'question', text: p.question };
  if (p.kind === 'blocked') return { kind: 'blocked', text: p.reason };
  return { kind: 'permission', text: p.tool, request_id: p.request_id, input: p.input };
}

/** What a round's board shows of a session besides its state (supervision's SessionFacts). */
function factsOf(c: SessionContext): SessionFacts {
  const w = c.worktree;
  return {
    runtime: c.runtime,
    held: c.held ? c.held.reason : null,
    loop: c.loop ? c.loop.pattern : null,
    rate_limited_until: c.rate_limit?.status === 'rejected' && !c.parked ? (c.rate_limit.resets_at ?? 0) : null,
    parked: c.parked ? { reason: c.parked.reason, resumes_at: c.parked.resumes_at } : null,
    spend_usd: c.usage.cost_usd,
    budget_usd: c.budget?.usd ?? null,
    deny_rules: c.permission_deny?.length ?? 0,
    worktree: w ? { branch: w.branch, base: w.base_branch, state: w.state, merged: w.merged !== null } : null,
    unsandboxed: c.origin !== 'external' && c.sandbox?.on !== true,
  };
}

/** A permission request a profile's deny answered as it arrived: which, the rule and why; null for any other event. */
function deniedOnArrival(event: SessionFact | undefined): { request_id: string; rule: string; reason: string } | null {
  if (event?.type !== 'session.permission_resolved' || event.by !== 'profile') return null;
  return { request_id: event.request_id, rule: event.rule ?? '', reason: event.reason ?? '' };
}
/** After SIGKILL, how long a stop request waits for the exit before answering anyway. */
const KILL_SETTLE_MS = 5000;

/** Who sent a message to a worker (the journal's actor) and by which path. */
export interface MessageFrom {
  by: 'user' | 'main_brain';
  via: MessageVia;
}

/**
 * Coding sessions, as the REST API, the tools and supervision use them: each request gathers its facts, goes through
 * the command path (session.commands.ts: decided by session.decider.ts in the session's mailbox, journaled), and only
 * then acts on the worker (session-workers.ts). Queries read the sessions in memory (session.registry.ts).
 */
export class SessionsService implements WorkerSessions, OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  /** Set by supervision: under scope `only`, a session is created excluded unless its request says otherwise. */
  private newSessionsExcluded = false;
  /** Set by supervision: external sessions join it only by the user's choice (include_external). */
  private newExternalJoins = false;
  /** The claude sessions started outside Brainstem that report through its hooks. */
  readonly externals: ExternalSessions;
  /** Sandboxed workers' network asks and refusals, as their launchers bring them. */
  readonly network: SessionNetwork;

  constructor(
    private readonly registry: SessionRegistry,
    private readonly commands: SessionCommands,
    private readonly workers: SessionWorkers,
    private readonly outputs: SessionOutput,
    private readonly setup: SessionSetup,
    private readonly ids: IdGenerator,
    private readonly worktrees: SessionWorktrees,
    private readonly spending: SessionSpending,
    runner: ProcessRunner,
    private readonly reads: SessionOutputReads,
    sandbox: { ask_wait_s: number },
    private readonly parking: SessionParking,
  ) {
    this.network = new SessionNetwork(commands, setup, ids, sandbox.ask_wait_s);
    this.externals = new ExternalSessions(registry, commands, setup, runner, ids, () => !this.newExternalJoins || this.newSessionsExcluded);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.registry.load();
    // Before the workers: a worktree whose preparation a restart cut short fails its session rather than leave it starting.
    await this.worktrees.start();
    await this.workers.start();
    // Once the workers are back: a session parked before the restart resumes at its journaled time.
    this.parking.start();
    await this.externals.start();
    void this.registry.startRetention();
    // The budgets may have changed while the service was down (BRAINSTEM_BUDGET_USD_PER_DAY, a profile, a new day).
    void this.spending.recheck(() => true);
  }

  /** Before the journal closes: the index of sessions in memory is snapshotted for the next boot. */
  onModuleDestroy(): Promise<void> {
    return this.registry.close();
  }

  onApplicationShutdown(): void {
    this.worktrees.stop();
    this.parking.release();
    this.workers.release();
  }

  /**
   * Everything is judged before the session is journaled (session.decider.ts): the profile (named, else bound to the
   * cwd or an ancestor, else the default), the cwd (explicit, else the profile's default_cwd), the runtime (the
   * request's, else the profile's), for runtimes that get the profile its lint findings, and the cap on live sessions.
   * The per-session configuration is written before the session is journaled, and removed if it is not.
   */
  async create(dto: CreateSessionDto): Promise<SessionStatus> {
    const id = this.ids.sessionId();
    const { body, files, worktree } = await this.setup.plan(dto, id);
    const day_budget_spent = await this.spending.daySpent(body.profile.id);
    if (files.length > 0) await this.setup.writeConfig(id, files);
    let actor: SessionActor;
    const isolation = this.setup.worktrees;
    try {
      const added = worktree ? { add: (alias: string) => isolation.add(worktree, alias), undo: isolation.undo.bind(isolation) } : undefined;
      const budget = budgetOf(dto.budget);
      actor = await this.commands.create({ ...body, budget, day_budget_spent, excluded: dto.excluded ?? this.newSessionsExcluded, node: this.registry.nodes.self }, added);
    } catch (e) {
      if (files.length > 0) await this.setup.removeConfig(id);
      throw e;
    }
    const launch = () => this.workers.launch(actor, dto.prompt ?? undefined);
    // A new worktree is checked out (and set up) off the request: the create answers while it is prepared.
    if (actor.context.worktree?.state === 'preparing') void this.worktrees.prepareAndLaunch(actor, launch);
    else await actor.run(launch);
    return this.statusOf(actor);
  }

  /** The status with its warnings (other live sessions in its work tree). */
  private statusOf(actor: SessionActor): SessionStatus {
    const tree = actor.context.work_tree;
    return toStatus(actor, tree ? workTreeWarnings(actor, this.registry.inWorkTree(tree)) : []);
  }

  private statuses(actors: SessionActor[]): SessionStatus[] {
    return actors.map((a) => this.statusOf(a));
  }

  /** The session's diff: its worktree's changes against its base, a page of patches (GET …/diff). */
  diff(idOrAlias: string, query: DiffQueryDto = {}): Promise<SessionDiff> {
    const file = query.file ?? null;
    const problem = file === null ? null : relativePathProblem(file);
    if (problem !== null) throw new DomainError('path_outside_tree', `file: ${problem}`, { file });
    const cursor = query.cursor ? decodeCursor(query.cursor) : { file: 0, line: 0 };
    if (cursor === null) throw new DomainError('invalid_input', 'cursor: must be a next_cursor this route gave');
    return this.worktrees.diff(idOrAlias, { file: file === null ? null : normalRelativePath(file), cursor, limit: query.limit ?? DEFAULT_DIFF_LINES });
  }

  /**
   * Whether a stop or a release would change the session now, decided on its state as it stands (pure: nothing is
   * journaled): `refused` with the error the command would answer, `unchanged` when it would journal nothing (a release
   * of a session not held, a stop already under way), else `changes`. The human gate asks it before holding a call.
   */
  wouldChange(idOrAlias: string, body: CommandBody<Extract<SessionCommand, { type: 'request_stop' | 'release' }>>): { refused: DomainError } | 'unchanged' | 'changes' {
    const actor = this.registry.get(idOrAlias);
    const decided = decide({ ...body, at: this.commands.now() }, actor.snapshot);
    if ('error' in decided) return { refused: new DomainError(decided.error.code, decided.error.message, decided.error.details) };
    return decided.events.length === 0 ? 'unchanged' : 'changes';
  }

  /** Why a merge, branch-only or discard of the session's worktree would change nothing (its refusal), or null. */
  worktreeRefusal(idOrAlias: string, op: WorktreeOp, args: { strategy?: MergeStrategy; force?: boolean }): Promise<DomainError | null> {
    return this.worktrees.refusal(idOrAlias, op, args);
  }

  /** Merge, branch-only or discard of the session's worktree, performed by the node that owns it. */
  async operateWorktree(idOrAlias: string, op: WorktreeOp, args: { strategy?: MergeStrategy; force?: boolean }, by = 'user'): Promise<SessionStatus> {
    return this.statusOf(await this.worktrees.operate(idOrAlias, op, args, by));
  }

  /** A page of the sessions in memory, in creation order. */
  list(query: ListSessionsQueryDto = {}): { sessions: SessionStatus[]; next_cursor: string | null } {
    const matching = this.registry
      .list()
      .filter((a) => (query.state === undefined || a.state === query.state) && (query.excluded === undefined || a.context.excluded === query.excluded));
    const page = pageOf(matching, aliasNumber, 'sessions', 'ascending', query);
    return { sessions: this.statuses(page.items), next_cursor: page.next_cursor };
  }

  /** What the main brain lists: live sessions in creation order, then exited ones, latest exit first; at most `limit`. */
  activeFirst(limit: number): { sessions: SessionStatus[]; omitted: number } {
    const all = this.registry.list();
    const live = all.filter((a) => a.live).sort((a, b) => aliasNumber(a) - aliasNumber(b));
    const exited = all.filter((a) => !a.live).sort((a, b) => b.context.state_since - a.context.state_since);
    const ordered = [...live, ...exited];
    return { sessions: this.statuses(ordered.slice(0, limit)), omitted: Math.max(0, ordered.length - limit) };
  }

  status(idOrAlias: string): SessionStatus {
    return this.statusOf(this.registry.get(idOrAlias));
  }

  /** The session's id and alias, or null when no session has that id or alias. */
  find(idOrAlias: string): { id: string; alias: string } | null {
    const actor = this.registry.find(idOrAlias);
    return actor ? { id: actor.id, alias: actor.context.alias } : null;
  }

  /** The session id when its worker may still act (a worker credential is revoked when its session exits). */
  liveWorker(sessionId: string): string | null {
    const actor = this.registry.find(sessionId);
    return actor && actor.id === sessionId && actor.live ? actor.id : null;
  }

  /**
   * A message to the session's worker. `from`: the person who sent it (the event's actor) and the path it came by, so
   * the chat can tell it answered the worker's open question; without it, it is Brainstem's own.
   */
  async dispatch(idOrAlias: string, text: string, from?: MessageFrom): Promise<SessionStatus> {
    const actor = await this.commands.commandable(idOrAlias);
    await actor.run(async () => {
      await this.commands.execute(actor, { type: 'dispatch_message', text, worker: this.workers.reachOf(actor), ...(from ? { via: from.via } : {}) }, from?.by);
      this.workers.deliver(actor, text);
    });
    return this.statusOf(actor);
  }

  /**
   * Answers the permission request named by `requestId`, or else the oldest one pending. An allow is judged in the
   * session's mailbox against the very request it answers, so no request journaled meanwhile can take it: the
   * profile's deny always wins, whoever allows (the user, the main brain), 403 naming the rule.
   */
  /**
   * `by`: who decides (the journal's actor): the user, or the main brain. `scope`: only on a sandboxed worker's `Network`
   * request, how far the user's allow reaches; with `profile` the host is added to the profile's sandbox.network.allow
   * first (a profile change, journaled as any), once the answer is known to be taken.
   */
  async resolvePermission(
    idOrAlias: string,
    decision: PermissionDecision,
    reason: string | null,
    requestId: string | undefined,
    by: 'user' | 'main_brain',
    scope?: NetworkScope,
  ): Promise<SessionStatus> {
    const actor = await this.commands.commandable(idOrAlias);
    const answer = async (): Promise<CommandBody<Extract<SessionCommand, { type: 'resolve_permission' }>>> => {
      const allow = decision === 'allow';
      const profile_deny = allow ? await this.setup.profileDeny(actor.context.profile_id) : [];
      const network_deny = allow ? (await this.setup.networkRules(actor.context.profile_id)).deny : [];
      const request = pendingPermission(actor.context, requestId);
      const worker = this.workers.answerReach(actor, request?.request_id);
      return { type: 'resolve_permission', request_id: requestId, decision, reason, profile_deny, home: this.setup.home, worker, by, scope, network_deny };
    };
    if (scope === 'profile') {
      // Judged first on the session as it stands (nothing journaled), so a refused answer widens no profile. Outside the
      // session's mailbox: the profile's change is followed by checks of its sessions, this one's among them.
      const decided = decide({ ...(await answer()), at: this.commands.now() }, actor.snapshot);
      if ('error' in decided) throw new DomainError(decided.error.code, decided.error.message, decided.error.details);
      const target = decided.events.find((e) => e.type === 'session.network_decided');
      if (target?.type === 'session.network_decided') await this.setup.allowHost(actor.context.profile_id, profileHostRule(target.host));
    }
    await actor.run(async () => {
      // The request the decision answers, as decide() picks it: once it is journaled, the request is no longer pending.
      const request = pendingPermission(actor.context, requestId);
      await this.commands.execute(actor, await answer(), by);
      if (request) this.workers.answer(actor, request, decision, reason);
    });
    return this.statusOf(actor);
  }

  /**
   * `body` is validated here, the one place every signal passes (REST, worker tools, the permission prompt). A
   * permission request a profile's deny matches is journaled as denied, and the caller gets 403 denied_by_profile
   * naming the rule: it is never pending.
   */
  signal(idOrAlias: string, body: unknown): Promise<SessionStatus> {
    return this.signalled(idOrAlias, body, (actor, event) => {
      const status = this.statusOf(actor);
      const denial = deniedOnArrival(event);
      if (denial) throw new DomainError('denied_by_profile', `${status.alias}'s permission request ${denial.request_id}: ${denial.reason}`, { ...denial, profile_id: status.profile_id });
      return status;
    });
  }

  /**
   * A permission_request signal that also names the request it raised (others may be pending before it), and, when a
   * profile's deny matched it as it arrived, why it was denied at once; `allowed`: the sandbox let it run at once (Bash
   * in a sandboxed session, sandbox.auto_allow_bash).
   */
  async requestPermission(idOrAlias: string, tool: string, input: JsonObject): Promise<{ status: SessionStatus; request_id: string; denied: string | null; allowed: boolean }> {
    const { status, event } = await this.signalled(idOrAlias, { type: 'permission_request', tool, input }, (actor, fact) => ({ status: this.statusOf(actor), event: fact }));
    if (event.type !== 'session.permission_requested' && event.type !== 'session.permission_resolved') throw new Error(`a permission_request signal became ${event.type}`);
    const allowed = event.type === 'session.permission_resolved' && event.by === 'sandbox' && event.decision === 'allow';
    return { status, request_id: event.request_id, denied: deniedOnArrival(event)?.reason ?? null, allowed };
  }

  /**
   * The signal journaled in the session's mailbox, then `answer` of the session and the signal's event. Chained, not
   * awaited, and the session taken at once when it is this node's: with the request id's async hooks on (Node 20),
   * every promise and await costs every signal of every worker (bench/README.md, The signal path, profiled).
   */
  private signalled<T>(idOrAlias: string, body: unknown, answer: (actor: SessionActor, event: SessionFact) => T): Promise<T> {
    let parsed: Signal;
    let here: SessionActor | null;
    try {
      parsed = parseSignal(body);
      here = this.commands.commandableHere(idOrAlias);
    } catch (e) {
      return Promise.reject(e);
    }
    const journal = (actor: SessionActor): Promise<T> =>
      actor
        .run(() => {
          if (parsed.type !== 'permission_request') return this.commands.execute(actor, { type: 'signal', signal: parsed }, 'worker');
          // Judged in the mailbox by the deny rules as they are now: a request that one matches is denied as it arrives.
          const request_id = this.ids.requestId();
          return this.setup.denyFacts(actor.context.profile_id, actor.context.sandbox?.on === true).then((deny) => this.commands.execute(actor, { type: 'signal', signal: { ...parsed, request_id, deny } }, 'worker'));
        })
        .then(([event]) => answer(actor, event));
    return here ? journal(here) : this.commands.commandable(idOrAlias).then(journal);
  }

  async setExcluded(idOrAlias: string, excluded: boolean, by = 'user'): Promise<void> {
    const actor = this.registry.get(idOrAlias);
    await actor.run(() => this.commands.execute(actor, { type: 'set_excluded', excluded }, by));
  }

  async setSupervision(idOrAlias: string, excluded: boolean): Promise<SessionStatus> {
    await this.setExcluded(idOrAlias, excluded);
    return this.status(idOrAlias);
  }

  /**
   * Holds the session: no message reaches its worker until it is released (a loop that persisted after the brain was
   * woken for it, a budget reached), and its turn under way is interrupted where the runtime allows. A session held
   * already stays held as it was.
   */
  async hold(idOrAlias: string, reason: HoldReason, detail: string, by = 'brainstem'): Promise<SessionStatus> {
    return (await this.held(idOrAlias, reason, detail, by)).status;
  }

  /** The hold, and whether this call is the one that held the session (false: it was held already). */
  private async held(idOrAlias: string, reason: HoldReason, detail: string, by: string): Promise<{ status: SessionStatus; now: boolean }> {
    const actor = await this.commands.commandable(idOrAlias);
    const now = await actor.run(async () => {
      const facts = await this.commands.execute(actor, { type: 'hold', reason, detail }, by);
      const held = facts.some((f) => f.type === 'session.held');
      // Its turn under way is interrupted here when the worker runs here, else by its node as it applies the hold.
      if (held) this.workers.interrupt(actor);
      return held;
    });
    return { status: toStatus(actor), now };
  }

  /**
   * A session parked at its model's limit (docs/guide/usage.md#usage-limits): resumed now (its "continue", or the prompt
   * it never got to, goes to the worker), or kept parked until someone resumes it. 409 session_not_parked otherwise.
   */
  async resume(idOrAlias: string, keep: boolean, by: 'user' | 'main_brain' = 'user'): Promise<SessionStatus> {
    const actor = await this.commands.commandable(idOrAlias);
    await actor.run(async () => {
      if (keep) {
        await this.commands.execute(actor, { type: 'keep_parked' }, by);
        return;
      }
      const facts = await this.commands.execute(actor, { type: 'resume_parked', by, worker: this.workers.reachOf(actor) }, by);
      const sent = facts.find((f) => f.type === 'session.message_dispatched');
      if (sent) this.workers.deliver(actor, sent.text);
    });
    return this.statusOf(actor);
  }

  /** Lets messages reach the worker again; nothing happens to a session that is not held. */
  async release(idOrAlias: string, by = 'user'): Promise<SessionStatus> {
    const actor = await this.commands.commandable(idOrAlias);
    await actor.run(() => this.commands.execute(actor, { type: 'release', by }, by));
    return this.statusOf(actor);
  }

  /**
   * Sets the session's own budget (null: its profile's per-session budget applies): a budget raised past what it used
   * releases the session a budget held, one lowered under it holds the session now.
   */
  async setBudget(idOrAlias: string, budget: Budget | null, by = 'user'): Promise<SessionStatus> {
    const actor = await this.commands.commandable(idOrAlias);
    await actor.run(() => this.spending.setBudget(actor, budget, by));
    return toStatus(actor);
  }

  /**
   * Budgets changed elsewhere: a profile's (its live sessions here), or everything's day (the brain reached
   * BRAINSTEM_BUDGET_USD_PER_DAY: every one). They are held or released as they now stand.
   */
  budgetsChanged(profileId: string | null): Promise<void> {
    return this.spending.recheck((a) => profileId === null || a.context.profile_id === profileId);
  }

  /** SIGTERM to the worker's process group, SIGKILL at the deadline; answers once the session is exited. */
  async stop(idOrAlias: string, graceMs = DEFAULT_STOP_GRACE_MS): Promise<SessionStatus> {
    const actor = await this.commands.commandable(idOrAlias);
    await actor.run(async () => {
      await this.commands.execute(actor, { type: 'request_stop', grace_ms: graceMs });
      if (this.registry.owns(actor)) await this.workers.armStop(actor);
    });
    let settle: NodeJS.Timeout | undefined;
    await Promise.race([
      actor.whenExited(),
      new Promise<void>((r) => (settle = setTimeout(r, graceMs + KILL_SETTLE_MS))),
    ]).finally(() => clearTimeout(settle));
    return this.statusOf(actor);
  }

  /** The output's tail, then what the worker writes, read through whichever node (session-output-reads.ts). */
  outputStream(idOrAlias: string, tail = DEFAULT_TAIL, until?: AbortSignal): Promise<Observable<OutputStreamMessage>> {
    return this.reads.stream(idOrAlias, tail, until);
  }

  output(idOrAlias: string, tail = DEFAULT_TAIL): Promise<OutputTail> {
    return this.reads.tail(idOrAlias, tail);
  }

  /** The output's tail and the last turn result (read_session_output). */
  async outputAndResult(idOrAlias: string, tail: number): Promise<OutputTail & { last_result: string | null }> {
    const output = await this.output(idOrAlias, tail);
    return { ...output, last_result: this.registry.get(output.id).context.last_result };
  }

  /** What supervision reads. Every live session after boot is one whose worker was recovered. */
  directory(): SessionDirectory {
    const view = (a: SessionActor): SessionView => ({
      id: a.id,
      alias: a.context.alias,
      state: a.state,
      state_since: a.context.state_since,
      excluded: a.context.excluded,
      active: a.live,
      recoverable: a.live,
      ...(a.context.node ? { node: a.context.node } : {}),
      last_result: a.context.last_result,
      waiting_on: waitingOn(a.context.pending),
      attention_since: attentionSince(a.context),
      work_tree: a.context.work_tree ?? null,
      external: a.context.origin === 'external',
      facts: factsOf(a.context),
    });
    // Built apart and then returned, so it may hold more than the port names yet (exclusionWrite).
    const directory = {
      list: (): SessionView[] => this.registry.list().map(view),
      get: (id: string): SessionView | undefined => {
        const a = this.registry.find(id);
        return a ? view(a) : undefined;
      },
      exclusionWrite: (id: string, excluded: boolean, by: string) => this.commands.exclusionWrite(id, excluded, by),
      holdWhile: (holder: Parameters<SessionDirectory['holdWhile']>[0]) => this.registry.holdWhile(holder),
      outputTail: (id: string, lines: number) => {
        const a = this.registry.find(id);
        return a ? this.outputs.tail(a, lines) : [];
      },
      outputTailsElsewhere: (ids: readonly string[], lines: number, withinMs: number) => this.reads.tailsElsewhere(ids, lines, withinMs),
      excludeNewSessions: (excluded: boolean) => {
        this.newSessionsExcluded = excluded;
      },
      hold: async (id: string, reason: HoldReason, detail: string, by: string) => (await this.held(id, reason, detail, by)).now,
      includeNewExternalSessions: (included: boolean) => {
        this.newExternalJoins = included;
      },
    };
    return directory;
  }
}
