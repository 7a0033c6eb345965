import { isPlainObject } from '../../profiles/merge-patch';
import { LaunchSpec } from './runtime.port';
import { OutputEvent, Turn, TurnProtocol } from './turn-conversation';

const CODEX_ARGS = ['exec', '--json'];

/**
 * `codex exec --json` (JSONL): `thread.started` names the thread, `item.completed` carries the agent's
 * messages, `turn.failed` says why a turn failed. An `error` is often a retry under way ("Reconnecting... 1/5",
 * codex 0.169): it fails the turn only if nothing follows it. Later turns run `codex exec … resume <thread id> -`.
 * `codex exec` asks no permissions: the profile's approval_policy and sandbox_mode decide.
 */
export const codexProtocol: TurnProtocol = {
  runtime: 'codex',
  executable: 'codex',
  // Options go before `resume`: after it, codex takes only its global flags.
  args: (spec: LaunchSpec, threadId: string | null) => [...CODEX_ARGS, ...spec.profile_args, ...spec.args, ...(threadId ? ['resume', threadId] : []), '-'],
  read(event: OutputEvent, turn: Turn): string | null {
    const { type, item, error, message } = event;
    if (type === 'thread.started' && typeof event.thread_id === 'string') return event.thread_id;
    if (type === 'item.completed' && isPlainObject(item) && item.type === 'agent_message' && typeof item.text === 'string') turn.say(item.text);
    else if (type === 'turn.failed' && isPlainObject(error) && typeof error.message === 'string') turn.fail(error.message);
    else if (type === 'turn.completed') turn.completed();
    else if (type === 'error' && typeof message === 'string') turn.troubled(message);
    return null;
  },
};
