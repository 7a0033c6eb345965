import { randomUUID } from 'node:crypto';
import { isPlainObject } from '../../profiles/merge-patch';
import { JsonObject, PermissionDecision } from '../../sessions/session.events';
import { LineSplitter, MAX_LINE_CHARS } from '../../sessions/session-log';
import { CLAUDE_ARGS } from '../../sessions/runtimes/claude-code.runtime';
import { claudeRateLimit, claudeTurnUsage } from '../../sessions/runtimes/runtime-usage';
import { claudeLimit } from '../../sessions/runtimes/runtime-limits';
import { ProcessRunner, WorkerProcess } from '../../sessions/runtimes/process-runner';
import { BrainActivity, BrainAgent, BrainLaunch, BrainTurnEnd } from './brain-agent.port';

/** Brainstem's own MCP tools, allowed up front: the brain's heartbeat is never a permission prompt. */
export const BRAINSTEM_TOOLS_RULE = 'mcp__brainstem';
/** What claude says when a resume names a conversation it does not have. */
const NO_CONVERSATION = 'No conversation found with session ID';
/** What claude says when the conversation no longer fits the model's context window. */
const TOO_LONG = 'Prompt is too long';
const STDERR_KEPT = 4000;
/** How long claude has to exit by itself once its stdin ended, before it is killed. */
const CLOSE_GRACE_MS = 10_000;

/** The MCP configuration of the brain: Brainstem's /mcp with the brain's credential, taken from its environment. */
export function brainMcpConfig(mcpUrl: string): string {
  return JSON.stringify({ mcpServers: { brainstem: { type: 'http', url: mcpUrl, headers: { Authorization: 'Bearer ${BRAINSTEM_TOKEN}' } } } });
}

/** The arguments of the brain's long-lived claude: stream-json both ways, streamed text, Brainstem's MCP server only. */
export function claudeBrainArgs(launch: BrainLaunch, resume: string | null): string[] {
  // The workers' stream-json protocol (their echo of user messages is ignored here), with the text streamed as produced.
  return [
    ...CLAUDE_ARGS,
    '--include-partial-messages',
    '--mcp-config',
    brainMcpConfig(launch.mcp_url),
    '--strict-mcp-config',
    '--allowedTools',
    BRAINSTEM_TOOLS_RULE,
    '--append-system-prompt',
    launch.instructions,
    ...(launch.model ? ['--model', launch.model] : []),
    ...launch.profile_args,
    ...(resume ? ['--resume', resume] : []),
  ];
}

interface RunningTurn {
  on: (activity: BrainActivity) => void;
  resolve: (end: BrainTurnEnd) => void;
  lastText: string | null;
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const tokens = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * The brain hosted in one long-lived `claude -p` speaking stream-json. Each turn is a `user` message; `result` ends it.
 * The process outlives turns (a warm conversation answers without a start-up); a turn for another conversation, or
 * after the process died, starts a new process with `--resume <id>` (or none, for a new conversation).
 */
export class ClaudeBrainAgent implements BrainAgent {
  readonly runtime = 'claude-code';
  private proc: WorkerProcess | null = null;
  /** The conversation the running process holds (null until its init names it). */
  private conversation: string | null = null;
  private current: RunningTurn | null = null;
  private stderr = '';
  /** Whether the running process was started to continue a conversation (a failure at once means it could not). */
  private resumed = false;
  /** The model of the last answer, and the process's running cost at its last result: a turn's usage from its result. */
  private model: string | null = null;
  private costSoFar = 0;
  /** The account's limit refusing, as this turn's rate_limit_event said: a 429 that ends the turn resets then. */
  private rejected: { resets_at: number | null; limit_type: string | null } | null = null;

  constructor(
    private readonly runner: ProcessRunner,
    private readonly launch: () => BrainLaunch,
  ) {}

  get pid(): number | null {
    return this.proc?.pid ?? null;
  }

  turn(prompt: string, conversationId: string | null, on: (activity: BrainActivity) => void): Promise<BrainTurnEnd> {
    if (this.current) return Promise.resolve({ outcome: 'failed', reason: 'a brain turn is already running' });
    if (!this.proc || conversationId !== this.conversation) this.spawn(conversationId);
    return new Promise<BrainTurnEnd>((resolve) => {
      this.current = { on, resolve, lastText: null };
      this.proc?.stdin.write(JSON.stringify({ type: 'user', uuid: randomUUID(), message: { role: 'user', content: prompt } }) + '\n');
    });
  }

  resolvePermission(requestId: string, decision: PermissionDecision, reason: string | null, input: JsonObject): void {
    const response = decision === 'allow' ? { behavior: 'allow', updatedInput: input } : { behavior: 'deny', message: reason ?? 'refused by the user' };
    this.write({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } });
  }

  interrupt(reason: string): void {
    this.kill();
    this.end({ outcome: 'failed', reason });
  }

  /**
   * Between turns claude is let go gently: stdin ends and it exits once its transcript is written (a SIGKILL can lose
   * the last answer from the conversation a restart resumes). A turn still running is cut off.
   */
  close(): Promise<void> {
    if (this.current) {
      this.interrupt('the service is stopping');
      return Promise.resolve();
    }
    const proc = this.proc;
    this.proc = null;
    if (!proc) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const pid = proc.pid;
      const kill = setTimeout(() => {
        if (pid != null) this.runner.signalGroup(pid, 'SIGKILL');
        resolve();
      }, CLOSE_GRACE_MS);
      proc.onExit(() => {
        clearTimeout(kill);
        resolve();
      });
      proc.stdin.end();
    });
  }

  private spawn(resume: string | null): void {
    this.kill();
    this.stderr = '';
    this.conversation = resume;
    this.resumed = resume !== null;
    this.costSoFar = 0;
    const launch = this.launch();
    const proc = this.runner.spawn({ command: 'claude', args: claudeBrainArgs(launch, resume), cwd: launch.cwd, env: launch.env });
    this.proc = proc;
    const lines = new LineSplitter((line) => this.onLine(line), MAX_LINE_CHARS, () => undefined);
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (c: string) => lines.push(c));
    proc.stderr.on('data', (c: Buffer) => (this.stderr = (this.stderr + c.toString('utf8')).slice(-STDERR_KEPT)));
    proc.stdin.on('error', () => undefined);
    proc.onExit((code, signal, error) => {
      if (this.proc !== proc) return;
      this.proc = null;
      const why = error ? `claude could not start: ${error.message}` : `claude exited with ${signal ?? `code ${code}`} mid-turn`;
      const detail = this.stderr.trim();
      this.end({ outcome: 'failed', reason: detail ? `${why}: ${detail.slice(-500)}` : why, ...(this.stderr.includes(NO_CONVERSATION) ? { resume_failed: true } : {}) });
    });
  }

  private kill(): void {
    const proc = this.proc;
    this.proc = null;
    if (proc?.pid != null) this.runner.signalGroup(proc.pid, 'SIGKILL');
  }

  private write(message: JsonObject): void {
    if (this.proc && this.proc.stdin.writable) this.proc.stdin.write(JSON.stringify(message) + '\n');
  }

  private end(end: BrainTurnEnd): void {
    const turn = this.current;
    this.current = null;
    turn?.resolve(end);
  }

  private emit(activity: BrainActivity): void {
    this.current?.on(activity);
  }

  private onLine(line: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (!isPlainObject(msg)) return;
    if (msg.type === 'system' && msg.subtype === 'init' && typeof msg.session_id === 'string' && msg.session_id !== this.conversation) {
      this.conversation = msg.session_id;
      this.emit({ kind: 'conversation', id: msg.session_id });
    } else if (msg.type === 'stream_event' && isPlainObject(msg.event)) {
      const { event } = msg;
      if (event.type === 'content_block_delta' && isPlainObject(event.delta) && event.delta.type === 'text_delta') {
        const delta = text(event.delta.text);
        if (delta) this.emit({ kind: 'text_delta', text: delta });
      }
    } else if (msg.type === 'assistant' && isPlainObject(msg.message)) {
      this.onAssistant(msg.message);
    } else if (msg.type === 'rate_limit_event') {
      const limit = claudeRateLimit(msg);
      this.rejected = limit?.status === 'rejected' ? limit : null;
    } else if (msg.type === 'result') {
      this.onResult(msg);
    } else if (msg.type === 'control_request' && typeof msg.request_id === 'string' && isPlainObject(msg.request)) {
      const { request } = msg;
      if (request.subtype === 'can_use_tool' && typeof request.tool_name === 'string') {
        this.emit({ kind: 'permission_requested', request_id: msg.request_id, tool: request.tool_name, input: isPlainObject(request.input) ? (request.input as JsonObject) : {} });
      } else {
        this.write({ type: 'control_response', response: { subtype: 'error', request_id: msg.request_id, error: `unsupported control request ${String(request.subtype)}` } });
      }
    }
  }

  /** A complete message: its texts and tool calls, and the context it was answered from. Claude's own error messages are left to the result. */
  private onAssistant(message: Record<string, unknown>): void {
    if (message.model === '<synthetic>') return;
    if (typeof message.model === 'string') this.model = message.model;
    for (const block of Array.isArray(message.content) ? message.content : []) {
      if (!isPlainObject(block)) continue;
      if (block.type === 'text' && typeof block.text === 'string' && block.text.trim() !== '') {
        if (this.current) this.current.lastText = block.text;
        this.emit({ kind: 'text', text: block.text });
      } else if (block.type === 'tool_use' && typeof block.name === 'string') {
        this.emit({ kind: 'tool_use', name: block.name, input: isPlainObject(block.input) ? (block.input as JsonObject) : {} });
      }
    }
    const usage = message.usage;
    if (isPlainObject(usage)) {
      const context = tokens(usage.input_tokens) + tokens(usage.cache_read_input_tokens) + tokens(usage.cache_creation_input_tokens) + tokens(usage.output_tokens);
      if (context > 0) this.emit({ kind: 'usage', context_tokens: context });
    }
  }

  private onResult(msg: Record<string, unknown>): void {
    const entries = claudeTurnUsage(msg, this.model, this.costSoFar);
    if (typeof msg.total_cost_usd === 'number') this.costSoFar = msg.total_cost_usd;
    if (entries.length > 0) this.emit({ kind: 'turn_usage', entries });
    const result = text(msg.result);
    if (msg.is_error !== true) {
      this.end({ outcome: 'completed', text: result ?? this.current?.lastText ?? null });
      return;
    }
    if (result?.includes(TOO_LONG)) {
      this.end({ outcome: 'failed', reason: result, context_full: true });
      return;
    }
    const limit = claudeLimit(msg, this.rejected);
    this.rejected = null;
    if (limit) {
      this.end({ outcome: 'failed', reason: `its model's ${limit.reason.replace('_', ' ')} refused the turn: ${result ?? 'no detail'}`, limit });
      return;
    }
    if (typeof msg.api_error_status === 'number' || msg.subtype === 'success') {
      const message = `model API error${typeof msg.api_error_status === 'number' ? ` ${msg.api_error_status}` : ''}: ${result ?? 'no detail'}`;
      this.emit({ kind: 'api_error', message });
      this.end({ outcome: 'failed', reason: message });
      return;
    }
    // error_during_execution and the like: the process says why on stderr (a pipe of its own, maybe not read yet), and exits.
    const detail = this.stderr.trim();
    const resumeFailed = this.stderr.includes(NO_CONVERSATION) || (this.resumed && msg.num_turns === 0);
    this.end({ outcome: 'failed', reason: `claude: ${String(msg.subtype)}${detail ? `: ${detail.slice(-500)}` : ''}`, ...(resumeFailed ? { resume_failed: true } : {}) });
  }
}
