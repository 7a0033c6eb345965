import { isPlainObject } from '../../profiles/merge-patch';
import { JsonObject } from '../session.events';
import { ownSandboxArgs } from './runtime-own-sandbox';
import { LaunchSpec } from './runtime.port';
import { codexTurnUsage } from './runtime-usage';
import { codexLimit } from './runtime-limits';
import { OutputEvent, Turn, TurnProtocol } from './turn-conversation';

const CODEX_ARGS = ['exec', '--json'];
/** What codex 0.169 says when the model's context window is exceeded (its turn.failed message). */
const CONTEXT_FULL = "ran out of room in the model's context window";
/** Items that are the agent's own words, not something it did. */
const NOT_TOOLS = ['agent_message', 'reasoning', 'todo_list', 'error'];
/** An item's own bookkeeping and what it produced, not what it was asked. */
const NOT_INPUT = ['id', 'type', 'status', 'aggregated_output', 'exit_code'];

/** An item the agent started that acts (a command, an MCP tool call, a web search, a file change), as a tool use. */
function toolOf(item: Record<string, unknown>): { name: string; input: JsonObject } | null {
  if (typeof item.type !== 'string' || NOT_TOOLS.includes(item.type)) return null;
  if (item.type === 'mcp_tool_call' && typeof item.server === 'string' && typeof item.tool === 'string') {
    return { name: `mcp__${item.server}__${item.tool}`, input: isPlainObject(item.arguments) ? item.arguments : {} };
  }
  return { name: item.type, input: Object.fromEntries(Object.entries(item).filter(([key]) => !NOT_INPUT.includes(key))) };
}

/** What an acting item came back with: codex marks a command that exited non-zero `failed`, with its exit code. */
function resultOf(item: Record<string, unknown>): { ok: boolean; exit_code: number | null; output: string } {
  const exit_code = typeof item.exit_code === 'number' ? item.exit_code : null;
  const ok = item.status !== 'failed' && (exit_code === null || exit_code === 0);
  if (typeof item.aggregated_output === 'string') return { ok, exit_code, output: item.aggregated_output };
  if (isPlainObject(item.error) && typeof item.error.message === 'string') return { ok, exit_code, output: item.error.message };
  return { ok, exit_code, output: item.result === undefined ? '' : JSON.stringify(item.result) };
}

/**
 * `codex exec --json` (JSONL): `thread.started` names the thread, `item.completed` carries the agent's
 * messages, `item.started` of any other item is something it does (a tool use), its `item.completed` what came of
 * it (a command's exit code and output; a file change names its files, not what it wrote), `turn.completed` has the
 * thread's token usage so far, `turn.failed` says why a turn failed. An `error` is often a retry under way ("Reconnecting... 1/5",
 * codex 0.169): it fails the turn only if nothing follows it. Later turns run `codex exec … resume <thread id> -`.
 * `codex exec` asks no permissions: the profile's approval_policy and sandbox_mode decide, except inside Brainstem's
 * sandbox, where codex's own cannot nest and is turned off (runtime-own-sandbox.ts).
 */
export const codexProtocol: TurnProtocol = {
  runtime: 'codex',
  executable: 'codex',
  // Options go before `resume`: after it, codex takes only its global flags.
  args: (spec: Pick<LaunchSpec, 'args' | 'profile_args' | 'sandbox'>, threadId: string | null) => [
    ...CODEX_ARGS,
    ...spec.profile_args,
    ...ownSandboxArgs('codex', spec.sandbox !== null),
    ...spec.args,
    ...(threadId ? ['resume', threadId] : []),
    '-',
  ],
  read(event: OutputEvent, turn: Turn): string | null {
    const { type, item, error, message } = event;
    if (type === 'thread.started' && typeof event.thread_id === 'string') return event.thread_id;
    const itemId = isPlainObject(item) && typeof item.id === 'string' ? item.id : null;
    if (type === 'item.completed' && isPlainObject(item) && item.type === 'agent_message' && typeof item.text === 'string') turn.say(item.text);
    else if (type === 'item.started' && isPlainObject(item)) {
      const tool = toolOf(item);
      if (tool) turn.toolUsed(tool.name, tool.input, { id: itemId, opaque: item.type === 'file_change' });
    } else if (type === 'item.completed' && isPlainObject(item) && toolOf(item)) {
      const r = resultOf(item);
      turn.toolResult(itemId, r.ok, r.exit_code, r.output);
    } else if (type === 'turn.failed' && isPlainObject(error) && typeof error.message === 'string') {
      if (error.message.includes(CONTEXT_FULL)) turn.contextFull();
      const limit = codexLimit(error.message, new Date());
      if (limit) turn.limited(limit);
      turn.fail(error.message);
    } else if (type === 'turn.completed') {
      if (isPlainObject(event.usage) && typeof event.usage.input_tokens === 'number') turn.usage(event.usage.input_tokens);
      if (isPlainObject(event.usage)) turn.spend(codexTurnUsage(event.usage, turn.model));
      turn.completed();
    }
    else if (type === 'error' && typeof message === 'string') turn.troubled(message);
    return null;
  },
  resumeRefused: 'no rollout found for thread id',
  // codex 0.171's turn.completed after `exec resume` counts the whole thread (observed against its binary).
  cumulativeUsage: true,
};
