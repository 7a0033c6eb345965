import { posix } from 'node:path';
import { deniedBy } from '../profiles/permission-rules';
import { SessionErrorCode } from './session.errors';
import {
  Attachment,
  JsonObject,
  PermissionDecision,
  ProgressStatus,
  SessionEvent,
  SessionEventOf,
  pendingPermission,
} from './session.events';
import { SessionSnapshot, nextSnapshot, stateOf } from './session.machine';

/**
 * A coding session's rules, pure: decide() judges a command against the session's state and answers the events
 * to journal, or why the command is refused; evolve() folds an event into the state through the session machine's
 * transitions (the one source of the state), as replay does. The service loads the session, decides, journals
 * the events and only then acts on the worker. Time comes in the command (`at`), as every event carries it.
 */

/** Whether the worker can take a message now: its handle says, the state cannot (a restart detaches it, a worker may close stdin). */
export type WorkerReach = 'ready' | 'detached' | 'stdin_closed';

/**
 * What a worker (or a runtime hook) reports, as POST /{id}/signals and the worker tools take it; a permission
 * request with the id the service gave it.
 */
export type WorkerSignal =
  | { type: 'report_progress'; status: ProgressStatus; message?: string }
  | { type: 'notify_blocked'; reason: string }
  | { type: 'ask_human'; question: string }
  | { type: 'request_context'; query: string }
  | { type: 'turn_ended'; result?: string }
  | { type: 'permission_request'; tool: string; input?: JsonObject; request_id: string };

export type SessionCommand =
  /** A message for the worker (the user's, the main brain's, or the create's prompt). */
  | { type: 'dispatch_message'; at: number; text: string; worker: WorkerReach }
  /**
   * An answer to the pending permission request named by `request_id`, else the oldest. `profile_deny`: the deny rules
   * the session's profile has now, null when it cannot be read; `home`: the service's home, for `~/` in a rule when
   * the worker's env sets none.
   */
  | { type: 'resolve_permission'; at: number; request_id?: string; decision: PermissionDecision; reason: string | null; profile_deny: string[] | null; home: string }
  | { type: 'signal'; at: number; signal: WorkerSignal }
  | { type: 'set_excluded'; at: number; excluded: boolean }
  | { type: 'request_stop'; at: number; deadline_at: number }
  /** What the service and the runtimes report of the worker: facts, so a state that does not take one ignores it. */
  | { type: 'record_start'; at: number; pid: number | null; pid_start_time: string | null; idle: boolean }
  | { type: 'record_recovery'; at: number; attachment: Attachment; pid: number | null; pid_start_time: string | null; resumed: boolean }
  /** After a restart, no worker to re-attach or resume. */
  | { type: 'record_lost'; at: number }
  | { type: 'report_runtime_session'; at: number; runtime_session_id: string }
  | { type: 'report_turn_ended'; at: number; result: string | null; superseded: boolean }
  | { type: 'report_permission_requested'; at: number; request_id: string; tool: string; input: JsonObject }
  /** The worker's exit; `spawn_failed` when it never ran (no code, no signal). */
  | { type: 'report_exit'; at: number; code: number | null; signal: string | null; spawn_failed: boolean };

export interface SessionRefusal {
  code: SessionErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export type SessionDecision = { events: SessionEvent[] } | { error: SessionRefusal };

export function decide(command: SessionCommand, state: SessionSnapshot): SessionDecision {
  const c = state.context;
  const { at } = command;
  switch (command.type) {
    case 'dispatch_message': {
      const refused = exited(state) ?? stopping(state, 'takes no more messages');
      if (refused) return refused;
      if (command.worker !== 'ready') {
        const why = command.worker === 'detached' ? 'is detached after a restart' : 'closed its stdin';
        return refuse('message_not_deliverable', `session ${c.alias} cannot receive messages: its worker ${why}`, { worker: command.worker });
      }
      return userCommand(state, { type: 'session.message_dispatched', at, text: command.text }, 'a message');
    }
    case 'resolve_permission': {
      const refused = exited(state) ?? stopping(state, 'its pending request ends with it');
      if (refused) return refused;
      const request = pendingPermission(c, command.request_id);
      if (!request) {
        const which = command.request_id === undefined ? '' : ` ${command.request_id}`;
        return refuse('permission_not_pending', `session ${c.alias} has no pending permission request${which}`, command.request_id === undefined ? undefined : { request_id: command.request_id });
      }
      if (command.decision === 'allow' && c.profile_id !== null) {
        // The rules the session started with and those its profile has now: an edit may add denies, never take them away.
        if (command.profile_deny === null) {
          return refuse('denied_by_profile', `cannot read profile ${c.profile_id} of ${c.alias}, so its permission request is not allowed`, { profile_id: c.profile_id });
        }
        // `~/` in a rule is the worker's home: its HOME, as the service's launch spec sets it.
        const home = [c.env.HOME, c.profile_env?.HOME, command.home].find((h): h is string => h !== undefined && posix.isAbsolute(h)) ?? '/';
        const rule = deniedBy([...(c.permission_deny ?? []), ...command.profile_deny], request, { cwd: c.cwd, home });
        if (rule !== null) {
          return refuse(
            'denied_by_profile',
            `profile ${c.profile_id} denies ${request.tool} (rule ${rule}): a profile's deny always wins, so ${c.alias}'s request ${request.request_id} is not allowed`,
            { profile_id: c.profile_id, rule, request_id: request.request_id },
          );
        }
      }
      return userCommand(state, { type: 'session.permission_resolved', at, request_id: request.request_id, decision: command.decision, reason: command.reason }, 'a permission decision');
    }
    case 'signal':
      return exited(state) ?? userCommand(state, signalEvent(command.signal, at), `a ${command.signal.type} signal`);
    case 'set_excluded':
      return c.excluded === command.excluded ? { events: [] } : fact(state, { type: 'session.exclusion_changed', at, excluded: command.excluded });
    case 'request_stop':
      // A repeated stop journals nothing: the service signals again and waits for the same deadline.
      return exited(state) ?? (c.stop_deadline_at !== null ? { events: [] } : fact(state, { type: 'session.stop_requested', at, deadline_at: command.deadline_at }));
    case 'record_start':
      return fact(state, { type: 'session.started', at, pid: command.pid, pid_start_time: command.pid_start_time, idle: command.idle });
    case 'record_recovery':
      return fact(state, { type: 'session.recovered', at, attachment: command.attachment, pid: command.pid, pid_start_time: command.pid_start_time, resumed: command.resumed });
    case 'record_lost':
      return fact(state, { type: 'session.exited', at, code: null, signal: null, reason: c.stop_deadline_at !== null ? 'stopped' : 'lost_on_restart' });
    case 'report_runtime_session':
      return fact(state, { type: 'session.runtime_session_assigned', at, runtime_session_id: command.runtime_session_id });
    case 'report_turn_ended':
      return fact(state, { type: 'session.turn_ended', at, result: command.result, ...(command.superseded ? { superseded: true as const } : {}) });
    case 'report_permission_requested':
      return fact(state, { type: 'session.permission_requested', at, request_id: command.request_id, tool: command.tool, input: command.input });
    case 'report_exit':
      return fact(state, { type: 'session.exited', at, code: command.code, signal: command.signal, reason: exitReason(state, command) });
  }
}

/** The next state: the machine's transition; an event it does not take leaves the state as it was (decide never answers one). */
export function evolve(state: SessionSnapshot, event: SessionEvent): SessionSnapshot {
  return nextSnapshot(state, event) ?? state;
}

function exitReason(state: SessionSnapshot, report: SessionCommandOf<'report_exit'>): SessionEventOf<'session.exited'>['reason'] {
  if (report.spawn_failed) return 'spawn_failed';
  if (state.context.stop_deadline_at !== null) return 'stopped';
  // A detached worker is watched by its pid only: its end is seen, not reported with a code.
  if (state.context.attachment === 'detached') return 'vanished';
  return report.signal ? 'signaled' : 'exited';
}

type SessionCommandOf<K extends SessionCommand['type']> = Extract<SessionCommand, { type: K }>;

function signalEvent(signal: WorkerSignal, at: number): SessionEvent {
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
    case 'permission_request':
      return { type: 'session.permission_requested', at, request_id: signal.request_id, tool: signal.tool, input: signal.input ?? {} };
  }
}

function refuse(code: SessionErrorCode, message: string, details?: Record<string, unknown>): { error: SessionRefusal } {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}

function exited(state: SessionSnapshot): { error: SessionRefusal } | null {
  return stateOf(state) === 'exited' ? refuse('session_exited', `session ${state.context.alias} has exited`, { state: 'exited' }) : null;
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
  if (state.can(event)) return { events: [event] };
  const s = stateOf(state);
  const alias = state.context.alias;
  if (s === 'pending_authorization') return refuse('permission_pending', `session ${alias} is ${s}: resolve the pending permission request first`, { state: s });
  return refuse('session_not_started', `session ${alias} is ${s}: ${what} is not taken before its worker has started`, { state: s });
}

/** A reported fact: journaled when the state takes it, else nothing (a report after the exit, a start already recorded). */
function fact(state: SessionSnapshot, event: SessionEvent): SessionDecision {
  return { events: state.can(event) ? [event] : [] };
}
