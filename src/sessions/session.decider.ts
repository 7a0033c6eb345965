import { posix } from 'node:path';
import { Decision } from '../journal/command-handler';
import { deniedBy } from '../profiles/permission-rules';
import {
  Attachment,
  JsonObject,
  MessageVia,
  HoldReason,
  NetworkScope,
  PermissionDecision,
  PermissionRequest,
  ProgressStatus,
  SessionEvent,
  SessionEventOf,
  SessionCreated,
  SessionFact,
  SessionRecord,
  pendingPermission,
} from './session.events';
import { SessionContext, SessionSnapshot, accepts, createSession, nextSnapshot, nextState, stateOf } from './session.machine';
import { LoopDetection } from './loops/loop-detector';
import { WorktreeCommand, decideWorktree, isWorktreeCommand } from './session-worktree.decider';
import { BudgetCommand, decideBudgetCommand } from './session-budget';
import { LimitCommand, decideLimitCommand, isLimitCommand } from './session-limit.decider';
import type { WorkerReach } from './worker-reach';
import { ExternalCommand, decideCreateExternal, decideExternalReport } from './external-session.decider';
import { CreateSession, decideCreate } from './session-create.decider';
import { SessionDecision, SessionRefusal, refuse } from './session-refusal';
import { NetworkCommand, decideNetwork, isNetworkCommand, networkAnswer } from './session-network.decider';
import { NETWORK_TOOL } from './network-hosts';
import type { SandboxBash } from './session-profiles.port';

export { refuse } from './session-refusal';
export type { SessionDecision, SessionRefusal } from './session-refusal';
export { sessionCwd } from './session-create.decider';
export type { CreateSession, ProfileConfigFact, ProfileFinding, RuntimeFact, WorktreeFact } from './session-create.decider';

/**
 * A coding session's rules, pure: decide() judges a command against the session's state (null before it is created)
 * and answers the events to journal, or why the command is refused; evolve() folds an event into the state through
 * the session machine's transitions (the one source of the state), as replay does. The service gathers the facts a
 * command needs (time, the worker's reach, what a spawn gave), decides, journals the events and only then acts on the
 * worker. Time comes in the command (`at`), as every event carries it.
 */

/**
 * The deny rules a permission request is judged by: those of the session's profile now (null when it cannot be read),
 * and the service's home, for `~/` in a rule when the worker's env sets none. Besides them, always, the rules the
 * session started with.
 */
export interface DenyFacts {
  profile_deny: string[] | null;
  home: string;
  /**
   * In a sandboxed session, whether its profile lets Bash run unasked (`sandbox.auto_allow_bash`) and its ask rules,
   * which still ask; null when the profile cannot be read; absent outside a sandbox (Bash is asked).
   */
  sandbox_bash?: SandboxBash | null;
}

/**
 * What a worker (or a runtime hook) reports, as POST /{id}/signals and the worker tools take it; a permission
 * request with the id the service gave it, and the deny rules it is judged by as it arrives.
 */
export type WorkerSignal =
  | { type: 'report_progress'; status: ProgressStatus; message?: string }
  | { type: 'notify_blocked'; reason: string }
  | { type: 'ask_human'; question: string }
  | { type: 'request_context'; query: string }
  | { type: 'turn_ended'; result?: string }
  | { type: 'permission_request'; tool: string; input?: JsonObject; request_id: string; deny: DenyFacts };

export type SessionCommand =
  | CreateSession
  | WorktreeCommand
  /** Usage, budgets and rate limits: decided in session-budget.ts. */
  | BudgetCommand
  /** A turn refused by its model's limit, and the parked session's resume: decided in session-limit.decider.ts. */
  | LimitCommand
  /**
   * The worker was started (the create's launch): what the spawn gave, null when nothing ran; the create's prompt goes
   * to it with its start when the worker can take it (`worker`), as a message would.
   */
  | { type: 'launch'; at: number; spawn: { pid: number | null; pid_start_time: string | null; idle: boolean } | null; prompt: string | null; worker: WorkerReach }
  /** A message for the worker (the user's or the main brain's). */
  | { type: 'dispatch_message'; at: number; text: string; worker: WorkerReach; via?: MessageVia }
  /**
   * An answer to the pending permission request named by `request_id`, else the oldest. `profile_deny`: the deny rules
   * the session's profile has now, null when it cannot be read; `home`: the service's home, for `~/` in a rule when
   * the worker's env sets none.
   */
  | {
      type: 'resolve_permission';
      at: number;
      request_id?: string;
      decision: PermissionDecision;
      reason: string | null;
      profile_deny: string[] | null;
      home: string;
      /** Whether the answer can reach the worker; only an external session's hook that no longer waits refuses it. */
      worker?: WorkerReach;
      /** Who answers; only the user may allow a `Network` request. Absent: not the user. */
      by?: 'user' | 'main_brain';
      /** A `Network` request's allow: this connection (the default), the rest of the session, or the profile's allow list too. */
      scope?: NetworkScope;
      /** A `Network` request's allow: the profile's `sandbox.network.deny` now, null when it cannot be read. */
      network_deny?: string[] | null;
    }
  | { type: 'signal'; at: number; signal: WorkerSignal }
  /** A sandboxed worker's network: decided in session-network.decider.ts. */
  | NetworkCommand
  | { type: 'set_excluded'; at: number; excluded: boolean }
  /** The deadline is counted from the decision's own time: `grace_ms` after it. */
  | { type: 'request_stop'; at: number; grace_ms: number }
  /** No more turns until released (a loop that persisted, a budget reached); a session already held stays held as it was. */
  | { type: 'hold'; at: number; reason: HoldReason; detail: string }
  /** Lets messages reach the worker again; `by` names who released it (the user, a raised budget). */
  | { type: 'release'; at: number; by: string }
  /**
   * The worker's loop detector found a loop (the node that runs the worker): journaled unless its pattern is cooling
   * down for the session; the pattern then stays quiet for `cooldown_s`.
   */
  | { type: 'report_loop'; at: number; detection: LoopDetection; cooldown_s: number; escalate_after: number }
  /** What the service and the runtimes report of the worker: facts, so a state that does not take one ignores it. */
  | { type: 'record_recovery'; at: number; attachment: Attachment; pid: number | null; pid_start_time: string | null; resumed: boolean }
  /** After a restart, no worker to re-attach or resume. */
  | { type: 'record_lost'; at: number }
  | { type: 'report_runtime_session'; at: number; runtime_session_id: string }
  | { type: 'report_turn_ended'; at: number; result: string | null; superseded: boolean }
  /** A runtime's own permission request (claude's can_use_tool), judged by `deny` as it arrives. */
  | { type: 'report_permission_requested'; at: number; request_id: string; tool: string; input: JsonObject; deny: DenyFacts }
  /** The worker's exit; `spawn_failed` when it never ran (no code, no signal). */
  | { type: 'report_exit'; at: number; code: number | null; signal: string | null; spawn_failed: boolean }
  | ExternalCommand;

export function decide(command: SessionCommand, state: SessionSnapshot | null): SessionDecision {
  if (command.type === 'create') return decideCreate(command, state);
  if (isWorktreeCommand(command)) return decideWorktree(command, state);
  if (command.type === 'create_external') return decideCreateExternal(command, state);
  if (state === null) return refuse('not_found', `no coding session to take ${command.type}`);
  if (isNetworkCommand(command)) return decideNetwork(command, state);
  if (isLimitCommand(command)) return decideLimitCommand(state, command, accepts);
  const c = state.context;
  const { at } = command;
  switch (command.type) {
    case 'record_usage':
    case 'set_budget':
    case 'check_budget':
    case 'report_rate_limit':
      return { events: decideBudgetCommand(state, command) };
    case 'launch': {
      if (command.spawn === null) return fact(state, { type: 'session.exited', at, code: null, signal: null, reason: 'spawn_failed' });
      const started: SessionEvent = { type: 'session.started', at, ...command.spawn };
      // Launched once: a second launch, or one after the session ended, records nothing.
      if (!accepts(state, started) || command.prompt === null) return fact(state, started);
      // The prompt is a message like any other, judged on the started session; one it cannot take is not sent.
      const prompt = decide({ type: 'dispatch_message', at, text: command.prompt, worker: command.worker }, evolve(state, started));
      return { events: 'error' in prompt ? [started] : [started, ...prompt.events] };
    }
    case 'dispatch_message': {
      const refused = exited(state) ?? stopping(state, 'takes no more messages') ?? held(state, 'takes no more messages');
      if (refused) return refused;
      if (command.worker === 'not_waiting') return notWaiting(state, 'a message');
      if (command.worker !== 'ready') {
        const why = command.worker === 'detached' ? 'is detached after a restart' : 'closed its stdin';
        return refuse('message_not_deliverable', `session ${c.alias} cannot receive messages: its worker ${why}`, { worker: command.worker });
      }
      return userCommand(state, { type: 'session.message_dispatched', at, text: command.text, ...(command.via ? { via: command.via } : {}) }, 'a message');
    }
    case 'resolve_permission': {
      const refused = exited(state) ?? stopping(state, 'its pending request ends with it');
      if (refused) return refused;
      const request = pendingPermission(c, command.request_id);
      if (!request) {
        const which = command.request_id === undefined ? '' : ` ${command.request_id}`;
        return refuse('permission_not_pending', `session ${c.alias} has no pending permission request${which}`, command.request_id === undefined ? undefined : { request_id: command.request_id });
      }
      if (command.worker === 'not_waiting') return notWaiting(state, 'an answer to its permission request');
      // An allow would let the held turn go on; a deny only ends what it asked.
      const heldRefusal = command.decision === 'allow' ? held(state, 'its turn does not go on') : null;
      if (heldRefusal) return heldRefusal;
      if (command.decision === 'allow' && c.profile_id !== null) {
        if (command.profile_deny === null) {
          return refuse('denied_by_profile', `cannot read profile ${c.profile_id} of ${c.alias}, so its permission request is not allowed`, { profile_id: c.profile_id });
        }
        const rule = profileRule(c, request, { profile_deny: command.profile_deny, home: command.home });
        if (rule !== null) {
          return refuse(
            'denied_by_profile',
            `profile ${c.profile_id} denies ${request.tool} (rule ${rule}): a profile's deny always wins, so ${c.alias}'s request ${request.request_id} is not allowed`,
            { profile_id: c.profile_id, rule, request_id: request.request_id },
          );
        }
      }
      const network = networkAnswer(c, request, { at, decision: command.decision, reason: command.reason, by: command.by, scope: command.scope, network_deny: command.network_deny });
      if (network !== null && 'error' in network) return network;
      const answered = userCommand(state, { type: 'session.permission_resolved', at, request_id: request.request_id, decision: command.decision, reason: command.reason }, 'a permission decision');
      return network === null || 'error' in answered ? answered : { events: [...answered.events, network.event] };
    }
    case 'signal': {
      const sig = command.signal;
      if (sig.type === 'permission_request' && sig.tool === NETWORK_TOOL) {
        return refuse('invalid_input', `tool: ${NETWORK_TOOL} requests are the sandbox's own, raised by POST /api/v1/coding-sessions/:id/network-asks`);
      }
      const event = sig.type === 'permission_request' ? arrival(c, { request_id: sig.request_id, tool: sig.tool, input: sig.input ?? {} }, sig.deny, at) : signalEvent(sig, at);
      return exited(state) ?? userCommand(state, event, `a ${sig.type} signal`);
    }
    case 'set_excluded':
      return c.excluded === command.excluded ? { events: [] } : fact(state, { type: 'session.exclusion_changed', at, excluded: command.excluded });
    case 'request_stop':
      if (c.origin === 'external') {
        return refuse('session_external', `session ${c.alias} is a claude session Brainstem did not start: stop it where it runs (its terminal, or claude stop)`);
      }
      // A repeated stop journals nothing: the service signals again and waits for the same deadline.
      return exited(state) ?? (c.stop_deadline_at !== null ? { events: [] } : fact(state, { type: 'session.stop_requested', at, deadline_at: at + command.grace_ms }));
    case 'hold':
      return c.held !== null ? { events: [] } : fact(state, { type: 'session.held', at, reason: command.reason, detail: command.detail });
    case 'release':
      return c.held === null ? { events: [] } : fact(state, { type: 'session.released', at, by: command.by });
    case 'report_loop': {
      const d = command.detection;
      if ((c.loop_cooldowns[d.pattern] ?? -Infinity) > at) return { events: [] };
      const cooldown_until = at + command.cooldown_s * 1000;
      const { pattern, count, since, signature, summary, evidence } = d;
      return fact(state, { type: 'session.loop_detected', at, pattern, count, since, signature, summary, evidence, cooldown_until, escalate_after: command.escalate_after });
    }
    case 'record_recovery':
      return fact(state, { type: 'session.recovered', at, attachment: command.attachment, pid: command.pid, pid_start_time: command.pid_start_time, resumed: command.resumed });
    case 'record_lost':
      return fact(state, { type: 'session.exited', at, code: null, signal: null, reason: c.stop_deadline_at !== null ? 'stopped' : 'lost_on_restart' });
    case 'report_runtime_session':
      return fact(state, { type: 'session.runtime_session_assigned', at, runtime_session_id: command.runtime_session_id });
    case 'report_turn_ended':
      return fact(state, { type: 'session.turn_ended', at, result: command.result, ...(command.superseded ? { superseded: true as const } : {}) });
    case 'report_permission_requested':
      return fact(state, arrival(c, { request_id: command.request_id, tool: command.tool, input: command.input }, command.deny, at));
    case 'report_exit':
      return fact(state, { type: 'session.exited', at, code: command.code, signal: command.signal, reason: exitReason(state, command) });
    case 'report_external':
      return decideExternalReport(command.report, at, state);
  }
}

/**
 * The next state: a creation starts the session, then the machine's transitions; an event the state does not take
 * leaves it as it was (decide never answers one). Replay, other nodes' events and the command path all fold with it.
 */
export function evolve(state: SessionSnapshot | null, event: SessionCreated): SessionSnapshot;
export function evolve(state: SessionSnapshot, event: SessionFact): SessionSnapshot;
export function evolve(state: SessionSnapshot | null, event: SessionFact): SessionSnapshot | null;
export function evolve(state: SessionSnapshot | null, event: SessionFact): SessionSnapshot | null {
  if (event.type === 'session.created') return state ?? createSession(event.input);
  return state && (nextSnapshot(state, event) ?? state);
}

/**
 * The command's decision as the session's stream records it: each fact, followed by the state change it makes (a
 * `session.state_changed` record for consumers, derived, so replay skips it).
 */
export function decideRecords(command: SessionCommand, state: SessionSnapshot | null): Decision<SessionRecord> {
  const decision = decide(command, state);
  if ('error' in decision) return { events: [], error: decision.error };
  const records: SessionRecord[] = [];
  let s = state;
  decision.events.forEach((f, i) => {
    records.push(f);
    if (s === null || f.type === 'session.created') {
      s = evolve(s, f);
      return;
    }
    // The last fact's state is all that is needed of it: the command path applies the records as stored.
    const from = stateOf(s);
    const to = i === decision.events.length - 1 ? (nextState(s, f) ?? from) : stateOf((s = evolve(s, f)));
    if (from !== to) records.push({ type: 'session.state_changed', at: f.at, from, to, cause: f.type });
  });
  return { events: records };
}

function exitReason(state: SessionSnapshot, report: SessionCommandOf<'report_exit'>): SessionEventOf<'session.exited'>['reason'] {
  if (report.spawn_failed) return 'spawn_failed';
  if (state.context.stop_deadline_at !== null) return 'stopped';
  // A detached worker is watched by its pid only: its end is seen, not reported with a code.
  if (state.context.attachment === 'detached') return 'vanished';
  return report.signal ? 'signaled' : 'exited';
}

type SessionCommandOf<K extends SessionCommand['type']> = Extract<SessionCommand, { type: K }>;

/**
 * The deny rule that matches a request, or null: the rules the session started with and those its profile has now
 * (an edit may add denies, never take them away). A session without a profile has none.
 */
function profileRule(c: SessionContext, request: PermissionRequest, facts: { profile_deny: string[]; home: string }): string | null {
  if (c.profile_id === null) return null;
  return deniedBy([...(c.permission_deny ?? []), ...facts.profile_deny], request, { cwd: c.cwd, home: workerHome(c, facts.home) });
}

/** `~/` in a rule is the worker's home: its HOME, as the service's launch spec sets it, else the service's. */
function workerHome(c: SessionContext, serviceHome: string): string {
  return [c.env.HOME, c.profile_env?.HOME, serviceHome].find((h): h is string => h !== undefined && posix.isAbsolute(h)) ?? '/';
}

/**
 * A permission request as it arrives: pending, unless a profile's deny matches it; then it is answered deny at once,
 * with the rule, and never offered for an allow that could only be refused. A profile that cannot be read leaves the
 * request to be answered (its allow is refused then, its deny goes through), judged by the rules the session started with.
 * In a sandboxed session, Bash that no deny or ask rule matches is allowed at once when the profile lets it
 * (`sandbox.auto_allow_bash`): the sandbox contains what it does, as Claude Code's own sandbox mode lets it run.
 */
function arrival(c: SessionContext, request: PermissionRequest, deny: DenyFacts, at: number): SessionEvent {
  const rule = profileRule(c, request, { profile_deny: deny.profile_deny ?? [], home: deny.home });
  if (rule === null) {
    const bash = deny.sandbox_bash;
    const unasked = request.tool === 'Bash' && c.sandbox?.on === true && deny.profile_deny !== null && bash?.auto_allow === true;
    if (unasked && deniedBy(bash.ask, request, { cwd: c.cwd, home: workerHome(c, deny.home) }) === null) {
      const reason = 'the worker runs in the OS sandbox and its profile lets Bash run there without asking (sandbox.auto_allow_bash)';
      return { type: 'session.permission_resolved', at, request_id: request.request_id, decision: 'allow', reason, by: 'sandbox', tool: request.tool, input: request.input };
    }
    return { type: 'session.permission_requested', at, ...request };
  }
  const reason = `profile ${c.profile_id} denies ${request.tool} (rule ${rule}): a profile's deny always wins`;
  return { type: 'session.permission_resolved', at, request_id: request.request_id, decision: 'deny', reason, by: 'profile', rule, tool: request.tool, input: request.input };
}

function signalEvent(signal: Exclude<WorkerSignal, { type: 'permission_request' }>, at: number): SessionEvent {
  switch (signal.type) {
    case 'report_progress':
      return { type: 'session.progress', at, status: signal.status, message: signal.message ?? null };
    case 'notify_blocked':
      return { type: 'session.blocked', at, reason: signal.reason };
    case 'ask_human':
      return { type: 'session.asked_human', at, question: signal.question };
    case 'request_context':
      return { type: 'session.context_requested', at, query: signal.query };
    case 'turn_ended':
      return { type: 'session.turn_ended', at, result: signal.result ?? null };
  }
}

function exited(state: SessionSnapshot): { error: SessionRefusal } | null {
  return stateOf(state) === 'exited' ? refuse('session_exited', `session ${state.context.alias} has exited`, { state: 'exited' }) : null;
}

/** A held session takes nothing that would give its worker another turn, until it is released. */
function held(state: SessionSnapshot, what: string): { error: SessionRefusal } | null {
  const h = state.context.held;
  if (h === null) return null;
  const why = h.reason === 'loop' ? 'a loop that persisted' : 'its budget';
  return refuse('session_held', `session ${state.context.alias} is held for ${why} (${h.detail}): ${what} until the user releases it`, { reason: h.reason });
}

/** An external session's claude takes Brainstem's word only while one of its hooks waits for it. */
function notWaiting(state: SessionSnapshot, what: string): { error: SessionRefusal } {
  return refuse(
    'hook_not_waiting',
    `session ${state.context.alias} is a claude session Brainstem did not start: ${what} reaches it only while its hook waits (a Stop or a PermissionRequest of a supervised session), and none does now`,
  );
}

/** A message written to a worker that is being stopped would be journaled as dispatched and never read. */
function stopping(state: SessionSnapshot, what: string): { error: SessionRefusal } | null {
  return state.context.stop_deadline_at !== null ? refuse('session_stopping', `session ${state.context.alias} is being stopped: ${what}`) : null;
}

/**
 * A request's event, refused when the state does not take it. Past the checks before it, the machine refuses these
 * only before the worker has started, and a message while a permission request is pending.
 */
function userCommand(state: SessionSnapshot, event: SessionEvent, what: string): SessionDecision {
  if (accepts(state, event)) return { events: [event] };
  const s = stateOf(state);
  const alias = state.context.alias;
  if (s === 'pending_authorization') return refuse('permission_pending', `session ${alias} is ${s}: resolve the pending permission request first`, { state: s });
  return refuse('session_not_started', `session ${alias} is ${s}: ${what} is not taken before its worker has started`, { state: s });
}

/** A reported fact: journaled when the state takes it, else nothing (a report after the exit, a start already recorded). */
function fact(state: SessionSnapshot, event: SessionEvent): SessionDecision {
  return { events: accepts(state, event) ? [event] : [] };
}
