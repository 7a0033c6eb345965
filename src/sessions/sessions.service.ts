import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, OnModuleDestroy } from '@nestjs/common';
import { statSync } from 'node:fs';
import { Observable, Subject, concat, defer, filter, map, of } from 'rxjs';
import { homedir } from 'node:os';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { DomainError } from '../common/domain-error';
import { pageOf } from '../common/page';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { ServiceUrl } from '../config/service-url';
import { ProfileApplier } from '../profiles/apply/profile-applier';
import { SESSION_ENV, TOKEN_ENV } from '../profiles/emitters/emitter-support';
import { inheritedEnv } from '../auth/child-env';
import { Credentials } from '../auth/credentials';
import { JournalConflictError } from '../journal/journal.port';
import { ProfileDoc } from '../profiles/profile.schema';
import { ProfilesService } from '../profiles/profiles.service';
import { SessionDirectory, SessionView } from '../supervision/session-directory.port';
import { SessionActor } from './session.actor';
import { CreateSessionDto, ListSessionsQueryDto, parseSignal } from './session.dto';
import { SessionCommand, SessionDecision, WorkerReach, decide } from './session.decider';
import { JsonObject, PermissionDecision, SessionEvent, pendingPermission, sessionStream, toJournalEvent } from './session.events';
import { SessionLog } from './session-log';
import { CLOCK, Clock, ID_GENERATOR, IdGenerator } from './session.ports';
import { SessionSnapshot, nextSnapshot } from './session.machine';
import { SessionRegistry, aliasNumber } from './session.registry';
import { SessionStatus, toStatus } from './session.status';
import { RuntimeCatalog } from './runtimes/runtime-catalog';
import { PROCESS_RUNNER, ProcessRunner } from './runtimes/process-runner';
import { LaunchSpec, RuntimeReport, RuntimeSink } from './runtimes/runtime.port';
import { SessionConfig, claudeSessionConfig } from './runtimes/claude-code-profile';
import { codexSessionArgs } from './runtimes/codex-profile';
import { opencodeSessionConfig } from './runtimes/opencode-profile';

export const DEFAULT_STOP_GRACE_MS = 5000;
/** After SIGKILL, how long a stop request waits for the exit before answering anyway. */
const KILL_SETTLE_MS = 5000;
const DEFAULT_TAIL = 100;
/**
 * Decisions made again after another node appended to the session first, before the command fails with the conflict.
 * A node with a backlog of appends to the session (queued commands, its worker's reports) can win many rounds in a
 * row, each a round trip: the loser goes on until that backlog is through, not a fixed few times.
 */
const DECIDE_ATTEMPTS = 100;

type CommandBody<C extends SessionCommand = SessionCommand> = C extends SessionCommand ? Omit<C, 'at'> : never;

/** A message of a session's output stream: the tail first, then each chunk written. */
export type OutputStreamMessage = { type: 'tail'; data: { lines: string[] } } | { type: 'output'; data: { text: string } };

/**
 * Coding sessions: validates requests, starts workers through their runtime, feeds what workers do
 * into the session actors, and recovers workers after a restart. Each command is decided by the session's
 * rules (session.decider.ts) in its actor's mailbox, its events journaled through the registry, and only then
 * acted on: side effects on workers happen only after their event is journaled.
 */
@Injectable()
export class SessionsService implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  private readonly logger = new Logger('sessions');
  private creating = 0;
  /** Set by supervision: under scope `only`, a session is created excluded unless its request says otherwise. */
  private newSessionsExcluded = false;
  /** Workers' output as it is written, for the live tails (GET /coding-sessions/:id/output/stream). */
  private readonly output$ = new Subject<{ id: string; text: string }>();

  constructor(
    @Inject(CONFIG) private readonly config: BrainstemConfig,
    private readonly registry: SessionRegistry,
    private readonly runtimes: RuntimeCatalog,
    private readonly serviceUrl: ServiceUrl,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    private readonly profiles: ProfilesService,
    private readonly applier: ProfileApplier,
    @Inject(PROCESS_RUNNER) private readonly runner: ProcessRunner,
    private readonly credentials: Credentials,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.registry.onForeignEvent((actor, event, before) => this.onForeignEvent(actor, event, before));
    await this.registry.load();
    // Another node's sessions are its own to recover: this node only follows them.
    for (const actor of this.registry.list()) {
      if (actor.live && this.registry.owns(actor)) await actor.run(() => this.recover(actor));
    }
    void this.registry.startRetention();
  }

  /** Before the journal closes: the index of sessions in memory is snapshotted for the next boot. */
  onModuleDestroy(): Promise<void> {
    return this.registry.close();
  }

  /** Workers outlive the service: let go of pipes and timers, never of the processes. */
  onApplicationShutdown(): void {
    for (const actor of this.registry.list()) {
      actor.handle?.release();
      if (actor.killTimer) clearTimeout(actor.killTimer);
      actor.log?.close();
    }
  }

  /**
   * Everything is validated before anything is written: the profile (named, else bound to the cwd or an
   * ancestor, else the default), the cwd (explicit, else the profile's default_cwd), the runtime (the request's,
   * else the profile's), and — for runtimes that get the profile — its lint findings. Only then is the
   * per-session configuration written and the session journaled.
   */
  async create(dto: CreateSessionDto): Promise<SessionStatus> {
    const { profileId, doc } = await this.profileFor(dto);
    // The validation pipe lets null through an optional field; like JSON clients mean it, it is read as absent.
    const command = dto.command ?? undefined;
    const requestedCwd = dto.cwd ?? (doc.default_cwd || undefined);
    if (requestedCwd === undefined) throw new DomainError('cwd_required', `cwd: required (profile ${profileId} has no default_cwd)`);
    const cwdSource = dto.cwd != null ? 'cwd' : `default_cwd of profile ${profileId}`;
    // Relative to what the caller cannot see (the service's own directory): refused rather than guessed.
    if (!isAbsolute(requestedCwd)) throw new DomainError('cwd_not_absolute', `${cwdSource}: must be an absolute path, not ${JSON.stringify(requestedCwd)}`);
    const cwd = resolve(requestedCwd);
    if (!isDirectory(cwd)) throw new DomainError('cwd_not_a_directory', `${cwdSource}: ${requestedCwd} does not exist or is not a directory`);
    const userEnv = dto.env ?? {};
    const pathEnv = userEnv.PATH ?? process.env.PATH ?? '';
    // A request with a command runs it, whatever runtime the profile targets.
    const runtime = dto.runtime ?? (command === undefined ? doc.runtime : undefined);
    const choice = this.runtimes.choose({ runtime, command, cwd, pathEnv });
    const id = this.ids.sessionId();
    const config = await this.profileConfig(choice.runtime.name, profileId, cwd, id);
    if (this.registry.liveCount() + this.creating >= this.config.sessions.max_sessions) {
      throw new DomainError('max_sessions_reached', `at most ${this.config.sessions.max_sessions} live coding sessions (BRAINSTEM_MAX_SESSIONS)`);
    }
    this.creating++;
    let actor: SessionActor;
    try {
      if (config?.dir) await writeFiles(config.dir, config.files);
      actor = await this.registry.create({
        id,
        title: dto.title ?? '',
        runtime: choice.runtime.name,
        profile_id: profileId,
        cwd,
        command: choice.command,
        args: dto.args ?? [],
        profile_args: config?.args ?? [],
        ...(config?.env ? { profile_env: config.env } : {}),
        permission_deny: denyRules(doc),
        env: userEnv,
        excluded: dto.excluded ?? this.newSessionsExcluded,
        created_at: this.clock.now(),
        node: this.registry.nodes.self,
      });
    } catch (e) {
      if (config?.dir) await rm(config.dir, { recursive: true, force: true });
      throw e;
    } finally {
      this.creating--;
    }
    await actor.run(() => this.launch(actor, dto.prompt ?? undefined));
    return toStatus(actor);
  }

  /** The session's profile; one that does not exist or does not parse refuses the session. */
  private async profileFor(dto: CreateSessionDto): Promise<{ profileId: string; doc: ProfileDoc }> {
    const profileId = await this.profiles.resolveForSession({ profile_id: dto.profile_id, cwd: dto.cwd });
    try {
      return { profileId, doc: (await this.profiles.forApply(profileId)).doc };
    } catch (e) {
      if (e instanceof DomainError && e.code === 'not_found') throw new DomainError('unknown_profile', `profile_id: no profile ${profileId}`);
      throw e;
    }
  }

  /**
   * Agent runtimes get the session's profile by flags, so starting a session never writes to the user's repo:
   * claude-code's point at files in `<journal dir>/session-config/<session id>/`, codex's are `-c` overrides,
   * opencode's config file there is named by OPENCODE_CONFIG and its agent by `--agent`. Gemini CLI has no
   * per-run way to take settings, so its sessions only record their profile.
   * A profile with lint errors (or a missing skill) cannot be applied faithfully, so the session is refused
   * (422, the findings in details) rather than started without it.
   */
  private async profileConfig(runtime: string, profileId: string, cwd: string, id: string): Promise<(SessionConfig & { dir: string | null }) | null> {
    if (runtime !== 'claude-code' && runtime !== 'codex' && runtime !== 'opencode') return null;
    const { doc, emitted, errors } = await this.applier.emission(profileId, runtime, cwd);
    if (errors.length) {
      const findings = errors.map((f) => `${f.path || '(profile)'}: ${f.message}`).join('; ');
      throw new DomainError('profile_has_errors', `profile ${profileId} has ${errors.length} error(s), so the session was not started: ${findings}`, { errors });
    }
    if (runtime === 'codex') return { dir: null, files: [], args: codexSessionArgs(doc, emitted.files) };
    const dir = join(this.config.journal.dir, 'session-config', id);
    if (runtime === 'opencode') return { dir, ...opencodeSessionConfig(doc, profileId, emitted.files, dir) };
    return { dir, ...claudeSessionConfig(doc, emitted.files, dir) };
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

  /**
   * A session to command. One of another node's is decided here against the state this node follows, and its events
   * appended: the owner performs the effect when it applies them (onForeignEvent); refused while the owner is down,
   * since nothing would act on them.
   */
  private async commandable(idOrAlias: string): Promise<SessionActor> {
    const actor = this.registry.get(idOrAlias);
    if (this.registry.owns(actor)) return actor;
    const owner = this.registry.ownerOf(actor);
    // Judged down from the last periodic read: heard again first, so a node that has just joined is not refused.
    if (!this.registry.nodes.isUp(owner)) await this.registry.nodes.refresh().catch(() => undefined);
    if (!this.registry.nodes.isUp(owner)) {
      throw new DomainError(
        'owner_unavailable',
        `session ${actor.context.alias} runs on node ${owner}, which has not been heard from within its lease (BRAINSTEM_NODE_LEASE_TTL_S): nothing would act on the command`,
        { node: owner },
      );
    }
    return actor;
  }

  async dispatch(idOrAlias: string, text: string): Promise<SessionStatus> {
    const actor = await this.commandable(idOrAlias);
    await actor.run(async () => {
      await this.execute(actor, { type: 'dispatch_message', text, worker: this.reachOf(actor) });
      if (this.registry.owns(actor)) actor.handle?.send(text);
    });
    return toStatus(actor);
  }

  /**
   * Answers the permission request named by `requestId`, or else the oldest one pending. An allow is judged in the
   * session's mailbox against the very request it answers, so no request journaled meanwhile can take it: the
   * profile's deny always wins, whoever allows (the user, the main brain), 403 naming the rule.
   */
  async resolvePermission(idOrAlias: string, decision: PermissionDecision, reason: string | null, requestId?: string): Promise<SessionStatus> {
    const actor = await this.commandable(idOrAlias);
    await actor.run(async () => {
      const profile_deny = decision === 'allow' ? await this.profileDeny(actor) : [];
      // The request the decision answers, as decide() picks it: once it is journaled, the request is no longer pending.
      const request = pendingPermission(actor.context, requestId);
      await this.execute(actor, { type: 'resolve_permission', request_id: requestId, decision, reason, profile_deny, home: homedir() });
      if (request && this.registry.owns(actor)) actor.handle?.resolvePermission(request.request_id, decision, reason, request.input);
    });
    return toStatus(actor);
  }

  /** The deny rules the session's profile has now; null when it cannot be read (then it allows nothing). */
  private async profileDeny(actor: SessionActor): Promise<string[] | null> {
    const id = actor.context.profile_id;
    if (id === null) return [];
    const profile = await this.profiles.get(id).catch(() => null);
    return profile && profile.error === null ? denyRules(profile) : null;
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

  private async signalled(idOrAlias: string, body: unknown): Promise<{ status: SessionStatus; event: SessionEvent }> {
    const parsed = parseSignal(body);
    const signal = parsed.type === 'permission_request' ? { ...parsed, request_id: this.ids.requestId() } : parsed;
    const actor = await this.commandable(idOrAlias);
    const [event] = await actor.run(() => this.execute(actor, { type: 'signal', signal }, 'worker'));
    return { status: toStatus(actor), event };
  }

  async setExcluded(idOrAlias: string, excluded: boolean, by = 'user'): Promise<void> {
    const actor = this.registry.get(idOrAlias);
    await actor.run(() => this.execute(actor, { type: 'set_excluded', excluded }, by));
  }

  async setSupervision(idOrAlias: string, excluded: boolean): Promise<SessionStatus> {
    await this.setExcluded(idOrAlias, excluded);
    return this.status(idOrAlias);
  }

  /** SIGTERM to the worker's process group, SIGKILL at the deadline; answers once the session is exited. */
  async stop(idOrAlias: string, graceMs = DEFAULT_STOP_GRACE_MS): Promise<SessionStatus> {
    const actor = await this.commandable(idOrAlias);
    await actor.run(async () => {
      await this.execute(actor, { type: 'request_stop', deadline_at: this.clock.now() + graceMs });
      if (this.registry.owns(actor)) await this.armStop(actor);
    });
    let settle: NodeJS.Timeout | undefined;
    await Promise.race([
      actor.whenExited(),
      new Promise<void>((r) => (settle = setTimeout(r, graceMs + KILL_SETTLE_MS))),
    ]).finally(() => clearTimeout(settle));
    return toStatus(actor);
  }

  /**
   * The output's tail, then each chunk the worker writes, as it comes. The tail is read when the stream is
   * subscribed, in the same turn: chunks are written synchronously, so none falls between the two or shows twice.
   */
  outputStream(idOrAlias: string, tail = DEFAULT_TAIL): Observable<OutputStreamMessage> {
    const id = this.registry.get(idOrAlias).id;
    return defer(() =>
      concat(
        of<OutputStreamMessage>({ type: 'tail', data: { lines: this.output(id, tail).lines } }),
        this.output$.pipe(
          filter((o) => o.id === id),
          map((o): OutputStreamMessage => ({ type: 'output', data: { text: o.text } })),
        ),
      ),
    );
  }

  output(idOrAlias: string, tail = DEFAULT_TAIL): { id: string; alias: string; lines: string[] } {
    const actor = this.registry.get(idOrAlias);
    return { id: actor.id, alias: actor.context.alias, lines: this.logOf(actor).tail(tail) };
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
    });
    return {
      list: (): SessionView[] => this.registry.list().map(view),
      get: (id: string): SessionView | undefined => {
        const a = this.registry.find(id);
        return a ? view(a) : undefined;
      },
      // Decided as set_excluded is, at the session's version now; supervision appends it with its own event.
      exclusionWrite: (id, excluded, by) => {
        const a = this.registry.find(id);
        const decision = a && this.decideOn(a, { type: 'set_excluded', excluded });
        if (!a || !decision || 'error' in decision || decision.events.length === 0) return null;
        const [event] = decision.events;
        const next = nextSnapshot(a.snapshot, event);
        if (!next) return null;
        // An exclusion never moves the session's state: no state_changed goes with it.
        return { stream: sessionStream(a.id), expectedVersion: a.version, events: [{ ...toJournalEvent(event), meta: { actor: by } }], apply: (r) => a.adopt(next, r.version) };
      },
      holdWhile: (holder) => this.registry.holdWhile(holder),
      outputTail: (id, lines) => {
        const a = this.registry.find(id);
        return a ? this.logOf(a).tail(lines) : [];
      },
      excludeNewSessions: (excluded) => {
        this.newSessionsExcluded = excluded;
      },
    };
  }

  /**
   * Decides the command on the session's state and journals the events decided; a refusal throws. When another node
   * appended to the session first (a conflict on its version), the session has followed that by then: decided again.
   * Call inside actor.run.
   */
  private async execute(actor: SessionActor, body: CommandBody, by?: string): Promise<SessionEvent[]> {
    for (let attempt = 1; ; attempt++) {
      const decision = this.decideOn(actor, body);
      if ('error' in decision) throw new DomainError(decision.error.code, decision.error.message, decision.error.details);
      let appended = 0;
      try {
        for (const event of decision.events) {
          await this.registry.apply(actor, event, by);
          appended++;
        }
        return decision.events;
      } catch (e) {
        if (!(e instanceof JournalConflictError) || appended > 0 || attempt >= DECIDE_ATTEMPTS) throw e;
        await this.registry.catchUp();
      }
    }
  }

  /**
   * Another node decided a command on a session of this node and journaled it: its effect on the worker is
   * performed here, in the session's mailbox, as if the command had been taken here.
   */
  private onForeignEvent(actor: SessionActor, event: SessionEvent, before: SessionSnapshot): void {
    actor
      .run(async () => {
        switch (event.type) {
          case 'session.message_dispatched':
            if (!actor.handle?.canReceive()) this.logger.warn(`session ${actor.id}: a message dispatched through another node found its worker unable to take it`);
            actor.handle?.send(event.text);
            return;
          case 'session.permission_resolved': {
            const request = pendingPermission(before.context, event.request_id);
            if (request) actor.handle?.resolvePermission(request.request_id, event.decision, event.reason, request.input);
            return;
          }
          case 'session.stop_requested':
            await this.armStop(actor);
            return;
          default:
            return;
        }
      })
      .catch((e: unknown) => this.logger.error(`session ${actor.id}: ${event.type} from another node not acted on: ${(e as Error).message}`));
  }

  /**
   * Whether the worker can take a message now: its handle says. Another node's worker is judged by the state this
   * node follows (its owner's handle is not here): attached is taken as ready.
   */
  private reachOf(actor: SessionActor): WorkerReach {
    if (!this.registry.owns(actor)) return actor.context.attachment === 'detached' ? 'detached' : 'ready';
    return reachOf(actor);
  }

  private decideOn(actor: SessionActor, body: CommandBody): SessionDecision {
    return decide({ ...body, at: this.clock.now() } as SessionCommand, actor.snapshot);
  }

  private async append(actor: SessionActor, events: SessionEvent[], by?: string): Promise<void> {
    for (const event of events) await this.registry.apply(actor, event, by);
  }

  /** A worker that never ran: no process to report a code or signal. */
  private spawnFailed(actor: SessionActor): Promise<SessionEvent[]> {
    return this.execute(actor, { type: 'report_exit', code: null, signal: null, spawn_failed: true });
  }

  private launch(actor: SessionActor, prompt: string | undefined): Promise<unknown> {
    const runtime = this.runtimes.get(actor.context.runtime);
    if (!runtime) throw new Error(`runtime ${actor.context.runtime} vanished`);
    try {
      actor.handle = runtime.start(this.launchSpec(actor), this.sink(actor));
    } catch (e) {
      this.logger.warn(`session ${actor.id}: spawn failed: ${(e as Error).message}`);
      return this.spawnFailed(actor);
    }
    const { pid, startTime } = actor.handle;
    // No pid: the spawn failed (its error is reported next, to an exited session); nothing started.
    if (pid === null && !runtime.processPerTurn) return this.spawnFailed(actor);
    return this.execute(actor, { type: 'record_start', pid, pid_start_time: startTime, idle: runtime.startsIdle(prompt !== undefined) }).then(async () => {
      if (prompt === undefined || reachOf(actor) !== 'ready') return;
      const decision = this.decideOn(actor, { type: 'dispatch_message', text: prompt, worker: 'ready' });
      // A worker that exited at once takes no prompt: the create still answers, with that status.
      if ('error' in decision) return;
      await this.append(actor, decision.events);
      actor.handle?.send(prompt);
    });
  }

  /** After a restart: re-attach, resume, or mark lost. Runs inside the actor's mailbox. */
  private async recover(actor: SessionActor): Promise<void> {
    const runtime = this.runtimes.get(actor.context.runtime);
    const c = actor.context;
    const stopping = c.stop_deadline_at !== null;
    const recovery = runtime?.recover(
      { ...this.launchSpec(actor), pid: c.pid, pid_start_time: c.pid_start_time, runtime_session_id: c.runtime_session_id, stopping },
      this.sink(actor),
    );
    if (!recovery) {
      // A worker spawned just before a crash never got its pid journaled, and a stopped one may have left
      // processes outside its group: they still carry the session's id.
      if (c.pid === null || stopping) this.signalStragglers(actor, 'SIGKILL');
      await this.execute(actor, { type: 'record_lost' });
      return;
    }
    actor.handle = recovery.handle;
    const h = recovery.handle;
    // A resume whose spawn failed (the cwd is gone, say): as at launch, nothing started.
    if (h.pid === null && !runtime?.processPerTurn) {
      await this.spawnFailed(actor);
      return;
    }
    await this.execute(actor, { type: 'record_recovery', attachment: h.attachment, pid: h.pid, pid_start_time: h.startTime, resumed: recovery.resumed });
    if (actor.context.stop_deadline_at !== null) await this.armStop(actor);
  }

  /** Signals SIGTERM (again, after a restart) and arms SIGKILL at the journaled deadline. */
  private async armStop(actor: SessionActor): Promise<void> {
    const deadline = actor.context.stop_deadline_at ?? this.clock.now();
    if (!actor.handle || !actor.handle.signal('SIGTERM')) {
      // Nothing left to signal: the worker is gone, or its exit report is already queued.
      this.signalStragglers(actor, 'SIGKILL');
      // A stop is requested, so decide() records the exit as `stopped`.
      if (!actor.handle) await this.execute(actor, { type: 'report_exit', code: null, signal: null, spawn_failed: false });
      return;
    }
    this.signalStragglers(actor, 'SIGTERM', true);
    if (actor.killTimer) clearTimeout(actor.killTimer);
    // The handle, not actor.handle: the timer outlives the worker's own exit (see onReport).
    const handle = actor.handle;
    actor.killTimer = setTimeout(() => {
      this.signalStragglers(actor, 'SIGKILL', handle.signal('SIGKILL'));
    }, Math.max(0, deadline - this.clock.now()));
    actor.killTimer.unref();
  }

  /**
   * The session's processes that signalling the worker's process group does not reach (a daemon that called
   * setsid, a worker whose pid a crash kept out of the journal), found by the session id every worker gets in
   * its environment. Members of the worker's group are skipped when that group was just signalled.
   */
  private signalStragglers(actor: SessionActor, signal: NodeJS.Signals, groupSignalled = false): void {
    const pids = this.runner.signalByEnv(SESSION_ENV, actor.id, signal, groupSignalled ? (actor.context.pid ?? undefined) : undefined);
    if (pids.length > 0) this.logger.warn(`session ${actor.id}: ${signal} to ${pids.length} process(es) outside its worker's group: ${pids.join(', ')}`);
  }

  private sink(actor: SessionActor): RuntimeSink {
    return {
      output: (chunk) => {
        this.logOf(actor).write(chunk);
        // Decoded even with no one watching, so the decoder stays in step with the bytes when someone starts to.
        const text = actor.outputText.write(chunk);
        if (text !== '' && this.output$.observed) this.output$.next({ id: actor.id, text });
      },
      report: (report) => {
        actor.run(() => this.onReport(actor, report)).catch((e: unknown) => this.logger.error(`session ${actor.id}: ${(e as Error).message}`));
      },
    };
  }

  private async onReport(actor: SessionActor, report: RuntimeReport): Promise<void> {
    switch (report.kind) {
      case 'runtime_session':
        await this.execute(actor, { type: 'report_runtime_session', runtime_session_id: report.runtime_session_id }, 'runtime');
        return;
      case 'turn_ended': {
        // The worker was given messages this turn did not take up: its next turn runs them, still working.
        const superseded = report.turn !== undefined && (actor.handle?.turnsStarted ?? 0) > report.turn;
        await this.execute(actor, { type: 'report_turn_ended', result: report.result, superseded }, 'runtime');
        return;
      }
      case 'permission_requested':
        await this.execute(actor, { type: 'report_permission_requested', request_id: report.request_id, tool: report.tool, input: report.input }, 'runtime');
        return;
      case 'exited': {
        // During a stop the SIGKILL still falls at the deadline: what the worker left in its group got the same SIGTERM.
        if (actor.killTimer && actor.context.stop_deadline_at === null) {
          clearTimeout(actor.killTimer);
          actor.killTimer = null;
        }
        actor.handle?.release();
        actor.handle = null;
        await this.execute(actor, { type: 'report_exit', code: report.code, signal: report.signal, spawn_failed: Boolean(report.spawn_error) }, 'runtime');
        actor.log?.close();
        return;
      }
    }
  }

  private launchSpec(actor: SessionActor): LaunchSpec {
    const c = actor.context;
    // Last, so neither a profile nor the request can set them: the worker's own credential, never the user's token.
    const env = inheritedEnv({ ...process.env, ...c.profile_env, ...c.env });
    Object.assign(env, { BRAINSTEM_URL: this.serviceUrl.get(), [SESSION_ENV]: c.id, [TOKEN_ENV]: this.credentials.workerToken(c.id) });
    return { session_id: c.id, cwd: c.cwd, command: c.command, args: c.args, profile_args: c.profile_args ?? [], env };
  }

  private logOf(actor: SessionActor): SessionLog {
    const onError = (e: Error) => this.logger.warn(`session ${actor.id}: output not logged: ${e.message}`);
    actor.log ??= SessionLog.in(join(this.config.journal.dir, 'session-logs'), actor.id, undefined, onError);
    return actor.log;
  }
}

function denyRules(doc: Pick<ProfileDoc, 'permissions' | 'tools'>): string[] {
  return [...doc.permissions.deny, ...(doc.tools.deny ?? [])];
}

/** What the worker's handle says of taking a message now. */
function reachOf(actor: SessionActor): WorkerReach {
  if (actor.handle?.canReceive()) return 'ready';
  return actor.context.attachment === 'detached' ? 'detached' : 'stdin_closed';
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A fresh per-session directory (the id is new), so plain writes: nothing there to merge with or protect. */
async function writeFiles(dir: string, files: SessionConfig['files']): Promise<void> {
  for (const file of files) {
    const target = join(dir, file.path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, file.content);
  }
}
