import { NETWORK_TOOL } from './network-hosts';
import { Logger } from '@nestjs/common';
import { inheritedEnv } from '../auth/child-env';
import { SESSION_ENV, TOKEN_ENV } from '../profiles/emitters/emitter-support';
import { ExternalLine } from './external-line';
import { SessionActor } from './session.actor';
import { SessionCommands } from './session.commands';
import { WorkerReach } from './worker-reach';
import { PermissionDecision, PermissionRequest, SessionEvent, SessionEventOf, pendingPermission } from './session.events';
import { DEFAULT_LIMIT_SETTINGS, LimitCommandOf, limitCommandOf } from './session-limit.model';
import { SessionContext, SessionSnapshot } from './session.machine';
import { SessionHost, WorkerEndpoint } from './session.ports';
import { SessionOutput } from './session-output';
import { SessionRegistry } from './session.registry';
import { SessionSetup } from './session-setup';
import { ProcessRunner } from './runtimes/process-runner';
import { RuntimeCatalog } from './runtimes/runtime-catalog';
import { LaunchSpec, RuntimeReport, RuntimeSink } from './runtimes/runtime.port';
import { SessionLoops } from './loops/session-loops';
import { SessionSpending } from './session-spending';

/** The complete environment of a session's worker. */
export type WorkerEnvironment = (session: SessionContext) => Record<string, string>;

/**
 * The service's environment without its credentials, the profile's and the request's on top; then, last, so neither
 * a profile nor the request can set them: the service's URL, the session's id, and the worker's own credential (never
 * the user's token).
 */
export function workerEnvironment(host: SessionHost, endpoint: WorkerEndpoint): WorkerEnvironment {
  return (c) => ({
    ...inheritedEnv({ ...host.env, ...c.profile_env, ...c.env }),
    BRAINSTEM_URL: endpoint.url(),
    [SESSION_ENV]: c.id,
    [TOKEN_ENV]: endpoint.token(c.id),
  });
}

/**
 * The workers behind the sessions this node owns: started, recovered after a restart, told what commands decided
 * (a message, a permission answer, a stop), and heard from (their output and reports, which become commands). Every
 * effect follows the event that records it: a worker is acted on only once its command is journaled.
 */
export class SessionWorkers {
  private readonly logger = new Logger('sessions');

  constructor(
    private readonly registry: SessionRegistry,
    private readonly commands: SessionCommands,
    private readonly runtimes: RuntimeCatalog,
    private readonly runner: ProcessRunner,
    private readonly environment: WorkerEnvironment,
    private readonly output: SessionOutput,
    private readonly setup: Pick<SessionSetup, 'denyFacts'>,
    private readonly loops: SessionLoops,
    /** What the workers spend, and the budgets that hold them. */
    private readonly spending: SessionSpending | null = null,
    /** How a turn refused by its model's limit parks its session (session-limit.decider.ts). */
    private readonly limitCommand: LimitCommandOf = limitCommandOf(DEFAULT_LIMIT_SETTINGS, Math.random),
  ) {}

  /** After the registry loaded: the effects of other nodes' commands are performed here; this node's workers recovered. */
  async start(): Promise<void> {
    this.registry.onForeignEvent((actor, event, before) => this.onForeignEvent(actor, event, before));
    // Another node's sessions are its own to recover: this node only follows them. External sessions run no worker of
    // ours: their claude is watched again by external-sessions.ts.
    for (const actor of this.registry.list()) {
      if (actor.live && this.registry.owns(actor) && actor.context.origin !== 'external') await actor.run(() => this.recover(actor));
    }
  }

  /** Workers outlive the service: let go of pipes and timers, never of the processes. */
  release(): void {
    for (const actor of this.registry.list()) {
      actor.handle?.release();
      if (actor.killTimer) clearTimeout(actor.killTimer);
      actor.log?.close();
    }
  }

  /**
   * Whether the worker can take a message now: its handle says. Another node's worker is judged by the state this
   * node follows (its owner's handle is not here): attached is taken as ready.
   */
  reachOf(actor: SessionActor): WorkerReach {
    if (actor.context.origin === 'external') return actor.handle?.canReceive() ? 'ready' : 'not_waiting';
    if (!this.registry.owns(actor)) return actor.context.attachment === 'detached' ? 'detached' : 'ready';
    if (actor.handle?.canReceive()) return 'ready';
    return actor.context.attachment === 'detached' ? 'detached' : 'stdin_closed';
  }

  /** Whether an answer to this permission request reaches the worker: for an external session, only while its hook waits. */
  answerReach(actor: SessionActor, requestId: string | undefined): WorkerReach | undefined {
    if (actor.context.origin !== 'external') return undefined;
    return requestId !== undefined && actor.handle instanceof ExternalLine && actor.handle.awaits(requestId) ? 'ready' : 'not_waiting';
  }

  /** A message journaled for the session: its worker gets it, when it runs here. */
  deliver(actor: SessionActor, text: string): void {
    if (this.registry.owns(actor)) actor.handle?.send(text);
  }

  /**
   * A hold journaled for the session (a loop that persisted, a budget reached): the turn under way is interrupted where
   * the runtime allows, when the worker runs here.
   */
  interrupt(actor: SessionActor): void {
    if (!this.registry.owns(actor) || !actor.handle?.interrupt) return;
    if (actor.handle.interrupt()) this.logger.log(`session ${actor.id}: held, its turn under way interrupted`);
  }

  /** A permission answer journaled for the session: its worker's runtime gets it, when it runs here. */
  answer(actor: SessionActor, request: PermissionRequest, decision: PermissionDecision, reason: string | null): void {
    // A Network request is the sandbox launcher's, answered by its waiting call (session-network.ts), not the runtime's.
    if (request.tool === NETWORK_TOOL) return;
    if (this.registry.owns(actor)) actor.handle?.resolvePermission(request.request_id, decision, reason, request.input);
  }

  /** Starts the worker of a session just created, and records what the start gave. Runs inside the actor's mailbox. */
  async launch(actor: SessionActor, prompt: string | undefined): Promise<void> {
    const runtime = this.runtimes.get(actor.context.runtime);
    if (!runtime) throw new Error(`runtime ${actor.context.runtime} vanished`);
    let spawn: { pid: number | null; pid_start_time: string | null; idle: boolean } | null = null;
    try {
      actor.handle = runtime.start(this.launchSpec(actor), this.sink(actor));
      const { pid, startTime } = actor.handle;
      // No pid: the spawn failed (its error is reported next, to an exited session); nothing started.
      if (pid !== null || runtime.processPerTurn) spawn = { pid, pid_start_time: startTime, idle: runtime.startsIdle(prompt !== undefined) };
    } catch (e) {
      this.logger.warn(`session ${actor.id}: spawn failed: ${(e as Error).message}`);
    }
    const worker = spawn ? this.reachOf(actor) : 'stdin_closed';
    const events = await this.commands.execute(actor, { type: 'launch', spawn, prompt: prompt ?? null, worker });
    // A worker that exited at once takes no prompt: the create still answers, with that status.
    const dispatched = events.find((e) => e.type === 'session.message_dispatched');
    if (dispatched) actor.handle?.send(dispatched.text);
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
      await this.commands.execute(actor, { type: 'record_lost' });
      return;
    }
    actor.handle = recovery.handle;
    const h = recovery.handle;
    // A resume whose spawn failed (the cwd is gone, say): as at launch, nothing started.
    if (h.pid === null && !runtime?.processPerTurn) {
      await this.commands.execute(actor, { type: 'report_exit', code: null, signal: null, spawn_failed: true });
      return;
    }
    await this.commands.execute(actor, { type: 'record_recovery', attachment: h.attachment, pid: h.pid, pid_start_time: h.startTime, resumed: recovery.resumed });
    if (actor.context.stop_deadline_at !== null) await this.armStop(actor);
  }

  /** Signals SIGTERM (again, after a restart) and arms SIGKILL at the journaled deadline. */
  async armStop(actor: SessionActor): Promise<void> {
    const deadline = actor.context.stop_deadline_at ?? this.commands.now();
    if (!actor.handle || !actor.handle.signal('SIGTERM')) {
      // Nothing left to signal: the worker is gone, or its exit report is already queued.
      this.signalStragglers(actor, 'SIGKILL');
      // A stop is requested, so decide() records the exit as `stopped`.
      if (!actor.handle) await this.commands.execute(actor, { type: 'report_exit', code: null, signal: null, spawn_failed: false });
      return;
    }
    this.signalStragglers(actor, 'SIGTERM', true);
    if (actor.killTimer) clearTimeout(actor.killTimer);
    // The handle, not actor.handle: the timer outlives the worker's own exit (see onReport).
    const handle = actor.handle;
    actor.killTimer = setTimeout(() => {
      this.signalStragglers(actor, 'SIGKILL', handle.signal('SIGKILL'));
    }, Math.max(0, deadline - this.commands.now()));
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

  /**
   * Another node decided a command on a session of this node and journaled it: its effect on the worker is
   * performed here, in the session's mailbox, as if the command had been taken here.
   */
  private onForeignEvent(actor: SessionActor, event: SessionEvent, before: SessionSnapshot): void {
    actor
      .run(async () => {
        await this.loops.facts(actor, [event]);
        switch (event.type) {
          case 'session.message_dispatched':
            if (!actor.handle?.canReceive()) this.logger.warn(`session ${actor.id}: a message dispatched through another node found its worker unable to take it`);
            actor.handle?.send(event.text);
            return;
          case 'session.permission_resolved': {
            const request = pendingPermission(before.context, event.request_id);
            if (request) this.answer(actor, request, event.decision, event.reason);
            return;
          }
          case 'session.stop_requested':
            await this.armStop(actor);
            return;
          case 'session.held':
            this.interrupt(actor);
            return;
          default:
            return;
        }
      })
      .catch((e: unknown) => this.logger.error(`session ${actor.id}: ${event.type} from another node not acted on: ${(e as Error).message}`));
  }

  private sink(actor: SessionActor): RuntimeSink {
    return {
      output: (chunk) => this.output.write(actor, chunk),
      report: (report) => {
        actor.run(() => this.onReport(actor, report)).catch((e: unknown) => this.logger.error(`session ${actor.id}: ${(e as Error).message}`));
      },
      reported: () => actor.run(() => undefined),
    };
  }

  private async onReport(actor: SessionActor, report: RuntimeReport): Promise<void> {
    switch (report.kind) {
      case 'activity':
        await this.loops.activity(actor, report.activity);
        return;
      case 'runtime_session':
        await this.commands.execute(actor, { type: 'report_runtime_session', runtime_session_id: report.runtime_session_id }, 'runtime');
        return;
      case 'turn_ended': {
        if (report.limit) {
          const [parked] = await this.commands.execute(actor, this.limitCommand(report.limit), 'runtime');
          if (parked?.type === 'session.parked') this.logParked(actor, parked);
          return;
        }
        // The worker was given messages this turn did not take up: its next turn runs them, still working.
        const superseded = report.turn !== undefined && (actor.handle?.turnsStarted ?? 0) > report.turn;
        await this.commands.execute(actor, { type: 'report_turn_ended', result: report.result, superseded }, 'runtime');
        return;
      }
      case 'permission_requested': {
        const { request_id, tool, input } = report;
        const deny = await this.setup.denyFacts(actor.context.profile_id, actor.context.sandbox?.on === true);
        const [event] = await this.commands.execute(actor, { type: 'report_permission_requested', request_id, tool, input, deny }, 'runtime');
        // Answered as it arrived (a profile's deny matched, with the rule; the sandbox let Bash run): the runtime is told so at once.
        if (event?.type === 'session.permission_resolved') this.answer(actor, { request_id, tool, input }, event.decision, event.decision === 'deny' ? event.reason : null);
        return;
      }
      case 'usage':
        await this.spending?.record(actor, report.entries, report.cumulative === true);
        return;
      case 'rate_limit':
        await this.commands.execute(actor, { type: 'report_rate_limit', status: report.status, resets_at: report.resets_at, limit_type: report.limit_type }, 'runtime');
        return;
      case 'exited': {
        // During a stop the SIGKILL still falls at the deadline: what the worker left in its group got the same SIGTERM.
        if (actor.killTimer && actor.context.stop_deadline_at === null) {
          clearTimeout(actor.killTimer);
          actor.killTimer = null;
        }
        actor.handle?.release();
        actor.handle = null;
        await this.commands.execute(actor, { type: 'report_exit', code: report.code, signal: report.signal, spawn_failed: Boolean(report.spawn_error) }, 'runtime');
        actor.log?.close();
        return;
      }
    }
  }

  private logParked(actor: SessionActor, p: SessionEventOf<'session.parked'>): void {
    const when = p.resumes_at === null ? 'until resumed' : `until ${new Date(p.resumes_at).toISOString()} (${p.source === 'runtime' ? 'its reset' : `backoff, refusal ${p.attempt} in a row`})`;
    this.logger.log(`session ${actor.context.alias}: parked at its ${p.reason.replace('_', ' ')} ${when}`);
    if (p.clamped) {
      const named = p.reported_resets_at == null ? 'none' : new Date(p.reported_resets_at).toISOString();
      const at = p.resumes_at === null ? 'when resumed' : `at ${new Date(p.resumes_at).toISOString()} instead`;
      this.logger.warn(`session ${actor.context.alias}: its runtime named a reset ${p.clamped === 'past' ? 'already past' : 'too far away'} (${named}): it resumes ${at}`);
    }
  }

  private launchSpec(actor: SessionActor): LaunchSpec {
    const c = actor.context;
    return {
      session_id: c.id,
      cwd: c.cwd,
      command: c.command,
      args: c.args,
      profile_args: c.profile_args ?? [],
      env: this.environment(c),
      sandbox: c.sandbox?.on ? c.sandbox.policy : null,
    };
  }
}
