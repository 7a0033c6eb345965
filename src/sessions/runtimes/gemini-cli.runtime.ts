import { isPlainObject } from '../../profiles/merge-patch';
import { LaunchSpec } from './runtime.port';
import { geminiTurnUsage } from './runtime-usage';
import { geminiLimit } from './runtime-limits';
import { OutputEvent, Turn, TurnProtocol } from './turn-conversation';

const GEMINI_ARGS = ['--output-format', 'stream-json'];
/** How gemini 0.61 fails a turn whose request would not fit the context window (its error's message). */
const CONTEXT_FULL = 'Context window will overflow';

function failed(turn: Turn, message: string): void {
  if (message.includes(CONTEXT_FULL)) turn.contextFull();
  const limit = geminiLimit(message, Date.now());
  if (limit) turn.limited(limit);
  turn.fail(message);
}

/**
 * Gemini CLI headless (`--output-format stream-json`, the prompt on stdin, which a non-TTY stdin makes headless):
 * `init` names the session, assistant `message`s (`delta: true` chunks) carry the answer, `tool_use` starts a new
 * message, `tool_result` says what it came back with, `result` has the turn's token stats, and with `status: "error"` it and `error` events of severity
 * `error` say why a turn failed. Later
 * turns add `--resume <session id>`. Headless gemini asks no permissions: its approval mode decides.
 */
export const geminiProtocol: TurnProtocol = {
  runtime: 'gemini-cli',
  executable: 'gemini',
  args: (spec: Pick<LaunchSpec, 'args' | 'profile_args'>, threadId: string | null) => [...GEMINI_ARGS, ...spec.profile_args, ...spec.args, ...(threadId ? ['--resume', threadId] : [])],
  read(event: OutputEvent, turn: Turn): string | null {
    const { type, message, error } = event;
    if (type === 'init' && typeof event.model === 'string') turn.model = event.model;
    if (type === 'init' && typeof event.session_id === 'string') return event.session_id;
    if (type === 'message' && event.role === 'assistant' && typeof event.content === 'string') turn.say(event.content, event.delta === true);
    else if (type === 'tool_use') {
      turn.toolUsed(typeof event.tool_name === 'string' ? event.tool_name : 'a tool', isPlainObject(event.parameters) ? event.parameters : {}, { id: typeof event.tool_id === 'string' ? event.tool_id : null });
    } else if (type === 'tool_result') {
      // gemini 0.61 does not say a shell command's exit code: a command that exited non-zero is a `success` with its output.
      const output = typeof event.output === 'string' ? event.output : isPlainObject(error) && typeof error.message === 'string' ? error.message : '';
      turn.toolResult(typeof event.tool_id === 'string' ? event.tool_id : null, event.status === 'success', null, output);
    } else if (type === 'error' && event.severity === 'error' && typeof message === 'string') failed(turn, message);
    else if (type === 'result') {
      if (isPlainObject(event.stats) && typeof event.stats.input_tokens === 'number') turn.usage(event.stats.input_tokens);
      if (isPlainObject(event.stats)) turn.spend(geminiTurnUsage(event.stats, turn.model));
      if (event.status === 'error') failed(turn, isPlainObject(error) && typeof error.message === 'string' ? error.message : 'gemini reported an error');
    }
    return null;
  },
  resumeRefused: 'Error resuming session',
};
