import { isPlainObject } from '../../profiles/merge-patch';
import { opencodeLimit } from './runtime-limits';
import { LaunchSpec } from './runtime.port';
import { opencodeStepUsage } from './runtime-usage';
import { OutputEvent, Turn, TurnProtocol } from './turn-conversation';

const OPENCODE_ARGS = ['run', '--format', 'json'];

/** opencode's error object: `{name, data: {message}}`. */
function errorMessage(error: unknown): string {
  if (!isPlainObject(error)) return 'opencode reported an error';
  if (isPlainObject(error.data) && typeof error.data.message === 'string') return error.data.message;
  return typeof error.name === 'string' ? error.name : 'opencode reported an error';
}

/**
 * A tool call that ended in error, as `tool (what it was asked)`: its error. A run asks no one, so a permission
 * that would ask is rejected, and opencode 1.18 then ends the run with nothing more to say: without this the
 * turn would end with no result, or with the text the agent wrote before the call.
 */
function toolFailure(part: unknown): string | null {
  if (!isPlainObject(part) || !isPlainObject(part.state) || part.state.status !== 'error' || typeof part.state.error !== 'string') return null;
  const input = part.state.input;
  const asked = isPlainObject(input) ? (input.command ?? input.filePath ?? input.url) : undefined;
  return `${typeof part.tool === 'string' ? part.tool : 'a tool'}${typeof asked === 'string' ? ` (${asked})` : ''}: ${part.state.error}`;
}

/** What a finished tool call came back with: a bash command's exit code is in its metadata (`completed` all the same). */
function resultOf(state: Record<string, unknown>): { ok: boolean; exit_code: number | null; output: string } | null {
  if (state.status !== 'completed' && state.status !== 'error') return null;
  const exit_code = isPlainObject(state.metadata) && typeof state.metadata.exit === 'number' ? state.metadata.exit : null;
  const output = typeof state.output === 'string' ? state.output : typeof state.error === 'string' ? state.error : '';
  return { ok: state.status === 'completed' && (exit_code === null || exit_code === 0), exit_code, output };
}

/** The input tokens of one model call, the context it held: opencode counts cached ones apart. */
function contextTokens(part: unknown): number | null {
  if (!isPlainObject(part) || !isPlainObject(part.tokens) || typeof part.tokens.input !== 'number') return null;
  const cache = isPlainObject(part.tokens.cache) ? part.tokens.cache : {};
  const cached = (typeof cache.read === 'number' ? cache.read : 0) + (typeof cache.write === 'number' ? cache.write : 0);
  return part.tokens.input + cached;
}

/**
 * `opencode run --format json` (JSON lines, each naming its `sessionID`), the message on a piped stdin: `text`
 * parts carry the answer (complete, not deltas), `tool_use` starts a new message (and says what the call came back
 * with: opencode reports a call once it is done), `step_finish` has the model
 * call's tokens, `error` says why a turn failed (a ContextOverflowError: the context window is exceeded),
 * and so does a tool call that failed when nothing follows it. Later turns add `--session <id>`. A headless run
 * asks no one: permissions that would ask are rejected (or, with `--auto` in args, approved).
 */
export const opencodeProtocol: TurnProtocol = {
  runtime: 'opencode',
  executable: 'opencode',
  args: (spec: Pick<LaunchSpec, 'args' | 'profile_args'>, threadId: string | null) => [...OPENCODE_ARGS, ...spec.profile_args, ...spec.args, ...(threadId ? ['--session', threadId] : [])],
  read(event: OutputEvent, turn: Turn): string | null {
    const { type, part } = event;
    if (type === 'text' && isPlainObject(part) && typeof part.text === 'string') turn.say(part.text);
    else if (type === 'tool_use') {
      const state = isPlainObject(part) && isPlainObject(part.state) ? part.state : {};
      const callId = isPlainObject(part) && typeof part.callID === 'string' ? part.callID : null;
      turn.toolUsed(isPlainObject(part) && typeof part.tool === 'string' ? part.tool : 'a tool', isPlainObject(state.input) ? state.input : {}, { id: callId });
      const r = resultOf(state);
      if (r) turn.toolResult(callId, r.ok, r.exit_code, r.output);
      const failed = toolFailure(part);
      if (failed) turn.troubled(failed);
    } else if (type === 'step_finish') {
      const tokens = contextTokens(part);
      if (tokens !== null) turn.usage(tokens);
      if (isPlainObject(part)) turn.spend(opencodeStepUsage(part, turn.model));
    } else if (type === 'error') {
      if (isPlainObject(event.error) && event.error.name === 'ContextOverflowError') turn.contextFull();
      const limit = opencodeLimit(event.error, Date.now());
      if (limit) turn.limited(limit);
      turn.fail(errorMessage(event.error));
    }
    return typeof event.sessionID === 'string' ? event.sessionID : null;
  },
  resumeRefused: 'Session not found',
};
