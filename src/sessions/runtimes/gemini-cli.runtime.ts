import { isPlainObject } from '../../profiles/merge-patch';
import { LaunchSpec } from './runtime.port';
import { OutputEvent, Turn, TurnProtocol } from './turn-conversation';

const GEMINI_ARGS = ['--output-format', 'stream-json'];

/**
 * Gemini CLI headless (`--output-format stream-json`, the prompt on stdin, which a non-TTY stdin makes headless):
 * `init` names the session, assistant `message`s (`delta: true` chunks) carry the answer, `tool_use` starts a new
 * message, `result` with `status: "error"` and `error` events of severity `error` say why a turn failed. Later
 * turns add `--resume <session id>`. Headless gemini asks no permissions: its approval mode decides.
 */
export const geminiProtocol: TurnProtocol = {
  runtime: 'gemini-cli',
  executable: 'gemini',
  args: (spec: LaunchSpec, threadId: string | null) => [...GEMINI_ARGS, ...spec.profile_args, ...spec.args, ...(threadId ? ['--resume', threadId] : [])],
  read(event: OutputEvent, turn: Turn): string | null {
    const { type, message, error } = event;
    if (type === 'init' && typeof event.session_id === 'string') return event.session_id;
    if (type === 'message' && event.role === 'assistant' && typeof event.content === 'string') turn.say(event.content, event.delta === true);
    else if (type === 'tool_use') turn.toolUsed();
    else if (type === 'error' && event.severity === 'error' && typeof message === 'string') turn.fail(message);
    else if (type === 'result' && event.status === 'error') turn.fail(isPlainObject(error) && typeof error.message === 'string' ? error.message : 'gemini reported an error');
    return null;
  },
};
