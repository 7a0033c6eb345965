import { OnApplicationBootstrap, OnApplicationShutdown, OnModuleDestroy } from '@nestjs/common';
import { Observable } from 'rxjs';
import { WorkerSessions } from '../auth/worker-sessions.port';
import { pageOf } from '../common/page';
import { SessionDirectory, SessionView } from '../supervision/session-directory.port';
import { SessionActor } from './session.actor';
import { SessionCommands } from './session.commands';
import { CreateSessionDto, ListSessionsQueryDto, parseSignal } from './session.dto';
import { HoldReason, JsonObject, PermissionDecision, SessionFact, pendingPermission } from './session.events';
import { DEFAULT_TAIL, OutputStreamMessage, SessionOutput } from './session-output';
import { IdGenerator } from './session.ports';
import { SessionRegistry, aliasNumber } from './session.registry';
import { SessionSetup } from './session-setup';
import { SessionStatus, toStatus } from './session.status';
import { SessionWorkers } from './session-workers';
import { ExternalSessions } from './external-sessions';
import { ProcessRunner } from './runtimes/process-runner';

export { OutputStreamMessage } from './session-output';

export const DEFAULT_STOP_GRACE_MS = 5000;
/** After SIGKILL, how long a stop request waits for the exit before answering anyway. */
const KILL_SETTLE_MS = 5000;

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

  constructor(
    private readonly registry: SessionRegistry,
    private readonly commands: SessionCommands,
    private readonly workers: SessionWorkers,
    private readonly outputs: SessionOutput,
    private readonly setup: SessionSetup,
    private readonly ids: IdGenerator,
    runner: ProcessRunner,
  ) {
    this.externals = new ExternalSessions(registry, commands, setup, runner, ids, () => !this.newExternalJoins || this.newSessionsExcluded);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.registry.load();
    await this.workers.start();
    await this.externals.start();
    void this.registry.startRetention();
  }

  /** Before the journal closes: the index of sessions in memory is snapshotted for the next boot. */
  onModuleDestroy(): Promise<void> {
    return this.registry.close();
  }

  onApplicationShutdown(): void {
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
    const { body, files } = await this.setup.plan(dto, id);
    if (files.length > 0) await this.setup.writeConfig(id, files);
    let actor: SessionActor;
    try {
      actor = await this.commands.create({ ...body, excluded: dto.excluded ?? this.newSessionsExcluded, node: this.registry.nodes.self });
    } catch (e) {
      if (files.length > 0) await this.setup.removeConfig(id);
      throw e;
    }
    await actor.run(() => this.workers.launch(actor, dto.prompt ?? undefined));
    return toStatus(actor);
  }

  /** A page of the sessions in memory, in creation order. */
  list(query: ListSessionsQueryDto = {}): { sessions: SessionStatus[]; next_cursor: string | null } {
    const matching = this.registry
      .list()
      .filter((a) => (query.state === undefined || a.state === query.state) && (query.excluded === undefined || a.context.excluded === query.excluded));
    const page = pageOf(matching, aliasNumber, 'sessions', 'ascending', query);
    return { sessions: page.items.map(toStatus), next_cursor: page.next_cursor };
  }

  /** What the main brain lists: live sessions in creation order, then exited ones, latest exit first; at most `limit`. */
  activeFirst(limit: number): { sessions: SessionStatus[]; omitted: number } {
    const all = this.registry.list();
    const live = all.filter((a) => a.live).sort((a, b) => aliasNumber(a) - aliasNumber(b));
    const exited = all.filter((a) => !a.live).sort((a, b) => b.context.state_since - a.context.state_since);
    const ordered = [...live, ...exited];
    return { sessions: ordered.slice(0, limit).map(toStatus), omitted: Math.max(0, ordered.length - limit) };
  }

  status(idOrAlias: string): SessionStatus {
    return toStatus(this.registry.get(idOrAlias));
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

  async dispatch(idOrAlias: string, text: string): Promise<SessionStatus> {
    const actor = await this.commands.commandable(idOrAlias);
    await actor.run(async () => {
      await this.commands.execute(actor, { type: 'dispatch_message', text, worker: this.workers.reachOf(actor) });
      this.workers.deliver(actor, text);
    });
    return toStatus(actor);
  }

  /**
   * Answers the permission request named by `requestId`, or else the oldest one pending. An allow is judged in the
   * session's mailbox against the very request it answers, so no request journaled meanwhile can take it: the
   * profile's deny always wins, whoever allows (the user, the main brain), 403 naming the rule.
   */
  async resolvePermission(idOrAlias: string, decision: PermissionDecision, reason: string | null, requestId?: string): Promise<SessionStatus> {
    const actor = await this.commands.commandable(idOrAlias);
    await actor.run(async () => {
      const profile_deny = decision === 'allow' ? await this.setup.profileDeny(actor.context.profile_id) : [];
      // The request the decision answers, as decide() picks it: once it is journaled, the request is no longer pending.
      const request = pendingPermission(actor.context, requestId);
      const worker = this.workers.answerReach(actor, request?.request_id);
      await this.commands.execute(actor, { type: 'resolve_permission', request_id: requestId, decision, reason, profile_deny, home: this.setup.home, worker });
      if (request) this.workers.answer(actor, request, decision, reason);
    });
    return toStatus(actor);
  }

  /** `body` is validated here, the one place every signal passes (REST, worker tools, the permission prompt). */
  async signal(idOrAlias: string, body: unknown): Promise<SessionStatus> {
    return (await this.signalled(idOrAlias, body)).status;
  }

  /** A permission_request signal that also names the request it raised (others may be pending before it). */
  async requestPermission(idOrAlias: string, tool: string, input: JsonObject): Promise<{ status: SessionStatus; request_id: string }> {
    const { status, event } = await this.signalled(idOrAlias, { type: 'permission_request', tool, input });
    if (event.type !== 'session.permission_requested') throw new Error(`a permission_request signal became ${event.type}`);
    return { status, request_id: event.request_id };
  }

  private async signalled(idOrAlias: string, body: unknown): Promise<{ status: SessionStatus; event: SessionFact }> {
    const parsed = parseSignal(body);
    const signal = parsed.type === 'permission_request' ? { ...parsed, request_id: this.ids.requestId() } : parsed;
    const actor = await this.commands.commandable(idOrAlias);
    const [event] = await actor.run(() => this.commands.execute(actor, { type: 'signal', signal }, 'worker'));
    return { status: toStatus(actor), event };
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
   * woken for it, a budget reached). A session held already stays held as it was.
   */
  async hold(idOrAlias: string, reason: HoldReason, detail: string, by = 'brainstem'): Promise<SessionStatus> {
    const actor = await this.commands.commandable(idOrAlias);
    await actor.run(() => this.commands.execute(actor, { type: 'hold', reason, detail }, by));
    return toStatus(actor);
  }

  /** Lets messages reach the worker again; nothing happens to a session that is not held. */
  async release(idOrAlias: string, by = 'user'): Promise<SessionStatus> {
    const actor = await this.commands.commandable(idOrAlias);
    await actor.run(() => this.commands.execute(actor, { type: 'release', by }, by));
    return toStatus(actor);
  }

  /** SIGTERM to the worker's process group, SIGKILL at the deadline; answers once the session is exited. */
  async stop(idOrAlias: string, graceMs = DEFAULT_STOP_GRACE_MS): Promise<SessionStatus> {
    const actor = await this.commands.commandable(idOrAlias);
    await actor.run(async () => {
      await this.commands.execute(actor, { type: 'request_stop', deadline_at: this.commands.now() + graceMs });
      if (this.registry.owns(actor)) await this.workers.armStop(actor);
    });
    let settle: NodeJS.Timeout | undefined;
    await Promise.race([
      actor.whenExited(),
      new Promise<void>((r) => (settle = setTimeout(r, graceMs + KILL_SETTLE_MS))),
    ]).finally(() => clearTimeout(settle));
    return toStatus(actor);
  }

  outputStream(idOrAlias: string, tail = DEFAULT_TAIL): Observable<OutputStreamMessage> {
    return this.outputs.stream(this.registry.get(idOrAlias), tail);
  }

  output(idOrAlias: string, tail = DEFAULT_TAIL): { id: string; alias: string; lines: string[] } {
    const actor = this.registry.get(idOrAlias);
    return { id: actor.id, alias: actor.context.alias, lines: this.outputs.tail(actor, tail) };
  }

  /** The output's tail and the last turn result (read_session_output). */
  outputAndResult(idOrAlias: string, tail: number): { id: string; alias: string; lines: string[]; last_result: string | null } {
    const actor = this.registry.get(idOrAlias);
    return { ...this.output(actor.id, tail), last_result: actor.context.last_result };
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
      external: a.context.origin === 'external',
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
      excludeNewSessions: (excluded: boolean) => {
        this.newSessionsExcluded = excluded;
      },
      includeNewExternalSessions: (included: boolean) => {
        this.newExternalJoins = included;
      },
    };
    return directory;
  }
}
