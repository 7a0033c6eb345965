import { JsonObject, NetworkDecider, NetworkScope, PermissionDecision, PermissionRequest, SessionEvent, SessionEventOf, pendingPermission } from './session.events';
import { SessionContext, SessionSnapshot, accepts, stateOf } from './session.machine';
import { NETWORK_TOOL, matchingRule } from './network-hosts';
import { SessionDecision, SessionRefusal, refuse } from './session-refusal';

/**
 * A sandboxed worker's network, pure: a connection to a host no sandbox rule decided (srt's ask, brought by the
 * worker's launcher), judged as it arrives: the profile's `sandbox.network.deny` denies it at once, the user's allow
 * for this session or the profile's `sandbox.network.allow` allows it, else it becomes a `Network` permission request
 * that waits. Only the user may allow one (an allow widens what the worker reaches); the brain may deny. The service
 * reads the profile's rules as they are now and brings them in the command.
 */

/** The profile's `sandbox.network` rules now; null when the profile cannot be read (then none of its rules decides). */
export interface NetworkRules {
  allow: string[] | null;
  deny: string[] | null;
}

/** Why the launcher's wait for an answer ended without one, as it saw it: no answer in time, or its connection closed. */
export type NetworkWaitEnd = 'timeout' | 'abandoned';

export type NetworkCommand =
  /** A connection srt asked about; `request_id` is the id its permission request gets if one is raised. */
  | { type: 'ask_network'; at: number; host: string; port: number; request_id: string; rules: NetworkRules }
  /**
   * The wait for request `request_id` ended unanswered: denied (by the exit when the session exited, as `withdrawn` when
   * the request was cleared), unless it was answered meanwhile. `wait_s`: the wait's length.
   */
  | { type: 'end_network_ask'; at: number; request_id: string; host: string; port: number; why: NetworkWaitEnd; wait_s: number }
  /** A connection srt refused on its own (its policy's deny), reported by the launcher. */
  | { type: 'report_network_refused'; at: number; host: string; port: number; reason: string };

const NETWORK_COMMANDS: ReadonlySet<string> = new Set<NetworkCommand['type']>(['ask_network', 'end_network_ask', 'report_network_refused']);

export const isNetworkCommand = (command: { type: string }): command is NetworkCommand => NETWORK_COMMANDS.has(command.type);

export function decideNetwork(command: NetworkCommand, state: SessionSnapshot): SessionDecision {
  const c = state.context;
  const { at, host, port } = command;
  switch (command.type) {
    case 'ask_network': {
      if (stateOf(state) === 'exited') return refuse('session_exited', `session ${c.alias} has exited`, { state: 'exited' });
      const target = `${host}:${port}`;
      const denied = matchingRule(command.rules.deny ?? [], host, port);
      if (denied !== null) {
        const reason = `profile ${c.profile_id} denies ${target} (rule ${denied}): a profile's deny always wins`;
        return taken(state, [decided(at, host, port, 'deny', 'profile', reason, { rule: denied })]);
      }
      const remembered = matchingRule(c.network_allowed ?? [], host, port);
      if (remembered !== null) return taken(state, [decided(at, host, port, 'allow', 'session', null, { rule: remembered })]);
      const allowed = matchingRule(command.rules.allow ?? [], host, port);
      if (allowed !== null) return taken(state, [decided(at, host, port, 'allow', 'profile', null, { rule: allowed })]);
      const request: SessionEvent = { type: 'session.permission_requested', at, request_id: command.request_id, tool: NETWORK_TOOL, input: { host, port } };
      if (accepts(state, request)) return { events: [request] };
      return refuse('session_not_started', `session ${c.alias} is ${stateOf(state)}: its worker has not started, so it asks for no host`, { state: stateOf(state) });
    }
    case 'end_network_ask': {
      // Answered meanwhile: that answer stands.
      if (decidedFor(c, command.request_id)) return { events: [] };
      const ended = (by: NetworkDecider, reason: string) => decided(at, host, port, 'deny', by, reason, { request_id: command.request_id });
      if (stateOf(state) === 'exited') return taken(state, [ended('exited', 'the session exited before the request was answered')]);
      const request = pendingPermission(c, command.request_id);
      // Cleared unanswered as the session moved on (its worker's turn ended, a message was sent): nothing allowed it.
      if (!request) return taken(state, [ended('withdrawn', 'the request was cleared before it was answered')]);
      const reason =
        command.why === 'timeout'
          ? `no answer within ${command.wait_s} s (BRAINSTEM_SANDBOX_ASK_WAIT_S): denied`
          : 'the sandbox launcher stopped waiting (its connection closed) before the request was answered';
      const resolved: SessionEvent = { type: 'session.permission_resolved', at, request_id: request.request_id, decision: 'deny', reason };
      return taken(state, [resolved, ended(command.why, reason)]);
    }
    case 'report_network_refused':
      return taken(state, [{ type: 'session.network_refused', at, host, port, reason: command.reason }]);
  }
}

/** What an answer to a pending permission request needs to judge a `Network` one: who answers, how far, the deny rules now. */
export interface NetworkAnswer {
  at: number;
  decision: PermissionDecision;
  reason: string | null;
  /** Absent: not the user. */
  by?: 'user' | 'main_brain';
  scope?: NetworkScope;
  /** The profile's `sandbox.network.deny` now (null: it cannot be read); absent on a deny. */
  network_deny?: string[] | null;
}

/**
 * The answer to `request` judged as a `Network` one, after the checks every answer gets: the refusal, or the network
 * decision journaled beside its session.permission_resolved; null when `request` is not a `Network` request and the
 * answer names no scope (nothing to add).
 */
export function networkAnswer(c: SessionContext, request: PermissionRequest, answer: NetworkAnswer): { error: SessionRefusal } | { event: SessionEventOf<'session.network_decided'> } | null {
  const target = request.tool === NETWORK_TOOL ? targetOf(request.input) : null;
  if (target === null) {
    if (answer.scope === undefined) return null;
    return refuse('invalid_input', `scope: only a Network request takes a scope; ${request.request_id} asks for ${request.tool}`, { request_id: request.request_id });
  }
  const { host, port } = target;
  const allow = answer.decision === 'allow';
  if (!allow && answer.scope !== undefined && answer.scope !== 'once') {
    return refuse('invalid_input', `scope: ${answer.scope} widens an allow; a deny answers this connection only`, { request_id: request.request_id });
  }
  if (allow && answer.by !== 'user') {
    return refuse(
      'network_allow_needs_user',
      `only the person may allow ${c.alias}'s connection to ${host}:${port} (request ${request.request_id}): allowing widens what its worker reaches; deny it, or ask the person`,
      { request_id: request.request_id, host, port },
    );
  }
  if (allow && c.profile_id !== null) {
    const deny = answer.network_deny;
    if (deny === null || deny === undefined) {
      return refuse('denied_by_profile', `cannot read profile ${c.profile_id} of ${c.alias}, so its connection to ${host}:${port} is not allowed`, { profile_id: c.profile_id });
    }
    const rule = matchingRule(deny, host, port);
    if (rule !== null) {
      return refuse('denied_by_profile', `profile ${c.profile_id} denies ${host}:${port} (rule ${rule}): a profile's deny always wins, so ${c.alias}'s request ${request.request_id} is not allowed`, {
        profile_id: c.profile_id,
        rule,
        request_id: request.request_id,
      });
    }
  }
  const by: NetworkDecider = answer.by === 'user' ? 'user' : 'brain';
  const scope = allow ? (answer.scope ?? 'once') : undefined;
  return { event: decided(answer.at, host, port, answer.decision, by, answer.reason, { request_id: request.request_id, ...(scope ? { scope } : {}) }) };
}

/** The network decision journaled for request `requestId`, among those the session keeps; null when none is. */
export function decidedFor(c: SessionContext, requestId: string): SessionEventOf<'session.network_decided'> | null {
  const found = (c.network ?? []).find((r) => r.kind === 'decided' && r.request_id === requestId);
  if (found === undefined || found.kind !== 'decided') return null;
  const { kind: _kind, ...data } = found;
  return { type: 'session.network_decided', ...data };
}

/** The host and port a `Network` request's input names, or null when it is not one the service raised. */
export function targetOf(input: JsonObject): { host: string; port: number } | null {
  const { host, port } = input;
  return typeof host === 'string' && typeof port === 'number' && Number.isInteger(port) ? { host, port } : null;
}

function decided(
  at: number,
  host: string,
  port: number,
  decision: PermissionDecision,
  by: NetworkDecider,
  reason: string | null,
  extra: { rule?: string; request_id?: string; scope?: NetworkScope },
): SessionEventOf<'session.network_decided'> {
  return { type: 'session.network_decided', at, host, port, decision, by, reason, ...extra };
}

/** The facts, when the state takes the first (every state of a session takes network facts; its permission answers, as ever). */
function taken(state: SessionSnapshot, events: SessionEvent[]): SessionDecision {
  return { events: events.length > 0 && accepts(state, events[0]) ? events : [] };
}
