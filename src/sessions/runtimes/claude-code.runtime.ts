import { randomUUID } from 'node:crypto';
import { clipToTextLimit } from '../session.dto';
import { JsonObject, PermissionDecision } from '../session.events';
import { LineSplitter, MAX_LINE_CHARS } from '../session-log';
import { ProcessRunner, WorkerProcess } from './process-runner';
import { clipOutput } from '../loops/loop-text';
import { LaunchSpec, Recovery, RecoverySpec, RuntimeSink, SessionRuntime, WorkerActivity, WorkerHandle } from './runtime.port';
import { claudeLimit } from './runtime-limits';
import type { LimitHit } from '../session-limit.model';
import { claudeRateLimit, claudeTurnUsage } from './runtime-usage';
import { AttachedWorker } from './worker-handles';

export const CLAUDE_ARGS = [
  '-p',
  '--input-format',
  'stream-json',
  '--output-format',
  'stream-json',
  '--verbose',
  '--replay-user-messages',
  '--permission-prompt-tool',
  'stdio',
];

/**
 * What claude needs in its environment to load its MCP tools (Brainstem's among them) into the first request:
 * since 2.1.33x it defers them behind ToolSearch unless ENABLE_TOOL_SEARCH=false, so a worker's report_progress or
 * the brain's send_to_session would cost a search first. A value already set (the service's, the session's) wins.
 */
export function claudeToolsUpFront(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return { ENABLE_TOOL_SEARCH: env.ENABLE_TOOL_SEARCH ?? 'false' };
}

type StreamMessage = {
  type?: unknown;
  subtype?: unknown;
  session_id?: unknown;
  uuid?: unknown;
  isReplay?: unknown;
  result?: unknown;
  request_id?: unknown;
  request?: { subtype?: unknown; tool_name?: unknown; input?: unknown };
  message?: { content?: unknown };
};

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How claude's Bash tool starts a failed command's result (2.1.33x): `Exit code 1` and then the output. */
const EXIT_CODE = /^Exit code (\d+)/;

/** A tool_result block's content: a text, or text blocks (images and the like say nothing here). */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b) => (isObject(b) && typeof b.text === 'string' ? b.text : '')).join('\n');
}

/**
 * The tool calls an assistant message makes (its `tool_use` blocks) and what a user message brings back (its
 * `tool_result` blocks), as the loop detector reads them.
 */
export function claudeActivity(msg: { type?: unknown; message?: { content?: unknown } }): WorkerActivity[] {
  const content = msg.message?.content;
  if (!Array.isArray(content) || (msg.type !== 'assistant' && msg.type !== 'user')) return [];
  const out: WorkerActivity[] = [];
  for (const block of content) {
    if (!isObject(block)) continue;
    const id = typeof block.id === 'string' ? block.id : null;
    if (msg.type === 'assistant' && block.type === 'tool_use' && typeof block.name === 'string') {
      out.push({ kind: 'tool_call', call_id: id, tool: block.name, input: isObject(block.input) ? block.input : {} });
    } else if (msg.type === 'user' && block.type === 'tool_result') {
      const output = resultText(block.content);
      const failed = block.is_error === true;
      const exit = failed ? EXIT_CODE.exec(output) : null;
      const callId = typeof block.tool_use_id === 'string' ? block.tool_use_id : null;
      out.push({ kind: 'tool_result', call_id: callId, ok: !failed, exit_code: exit ? Number(exit[1]) : null, output: clipOutput(output) });
    }
  }
  return out;
}

/**
 * One long-lived `claude -p` process speaking stream-json: instructions are `user` messages on stdin;
 * `system/init` carries the session id kept for `--resume`; `result` ends a turn; `control_request`
 * `can_use_tool` asks for a permission, answered with a `control_response` once resolved.
 *
 * Claude queues a message sent during a turn: it either takes it into that turn at the next tool boundary,
 * echoing it (`--replay-user-messages`, by the uuid we gave it), or runs a turn of its own for it (and for
 * any others queued with it, merged into one) after the current turn's `result`. So a `result` ends the
 * session's work only when claude has taken up every message sent: echoed, or sent before a `system/init`
 * (claude writes one as each turn begins, and slash commands such as `/compact` are never echoed).
 */
class ClaudeWorker extends AttachedWorker {
  private sent = 0;
  private taken = 0;
  private readonly unechoed = new Map<string, number>();
  private sessionId: string | null = null;
  /** The model of the turn's last answer, and the process's running cost at its last result . */
  private model: string | null = null;
  private costSoFar = 0;
  private rateLimit: string | null = null;
  /** The turn's `rate_limit_event` that refused it, for the reset its result may not say; the result's limit, for its turn end. */
  private rejected: { resets_at: number | null; limit_type: string | null } | null = null;
  private limitHit: Omit<LimitHit, 'prompt'> | null = null;

  constructor(proc: WorkerProcess, runner: ProcessRunner, sink: RuntimeSink) {
    super(proc, runner, sink);
    const lines = new LineSplitter((line) => this.onLine(line), MAX_LINE_CHARS, (head) => this.onOverflow(head));
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (c: string) => {
      sink.output(Buffer.from(c));
      lines.push(c);
    });
  }

  get turnsStarted(): number {
    return this.sent;
  }

  override send(text: string): void {
    const uuid = randomUUID();
    this.unechoed.set(uuid, ++this.sent);
    this.writeLine(JSON.stringify({ type: 'user', uuid, message: { role: 'user', content: text } }));
  }

  private takenUpTo(n: number): void {
    this.taken = Math.max(this.taken, n);
    for (const [uuid, k] of this.unechoed) if (k <= this.taken) this.unechoed.delete(uuid);
  }

  private turnEnded(result: string | null): void {
    const limit = this.limitHit;
    this.limitHit = null;
    this.sink.report({ kind: 'turn_ended', result, turn: this.taken, ...(limit ? { limit: { ...limit, prompt: null } } : {}) });
  }

  override resolvePermission(requestId: string, decision: PermissionDecision, reason: string | null, input: JsonObject): void {
    const response = decision === 'allow' ? { behavior: 'allow', updatedInput: input } : { behavior: 'deny', message: reason ?? 'denied by the supervisor' };
    this.controlResponse({ subtype: 'success', request_id: requestId, response });
  }

  /** Claude's own interrupt (what its SDK sends): the turn ends with a `result`, and messages it queued are dropped. */
  override interrupt(): boolean {
    if (!this.canReceive()) return false;
    this.writeLine(JSON.stringify({ type: 'control_request', request_id: `interrupt-${randomUUID()}`, request: { subtype: 'interrupt', cancel_queued: true } }));
    return true;
  }

  /**
   * What a line says of spending and rate limits, before the turn end it may carry is reported: a turn's usage (its
   * `result`), the model answering (its messages), the account's rate limit (a `rate_limit_event`, or a 429 that ended
   * the turn, which says no reset time; the next turn that answers clears it).
   */
  private account(msg: Record<string, unknown>): void {
    if (msg.type === 'assistant' && isObject(msg.message) && typeof msg.message.model === 'string' && msg.message.model !== '<synthetic>') {
      this.model = msg.message.model;
    } else if (msg.type === 'rate_limit_event') {
      const limit = claudeRateLimit(msg);
      if (limit) this.reportRateLimit(limit);
      this.rejected = limit?.status === 'rejected' ? limit : null;
    } else if (msg.type === 'result') {
      // The conversation holds the refused turn: its resume is a "continue" (session-limit.model.ts).
      this.limitHit = claudeLimit(msg, this.rejected);
      this.rejected = null;
      const entries = claudeTurnUsage(msg, this.model, this.costSoFar);
      if (typeof msg.total_cost_usd === 'number') this.costSoFar = msg.total_cost_usd;
      if (entries.length > 0) this.sink.report({ kind: 'usage', entries });
      if (msg.api_error_status === 429) {
        if (this.rateLimit !== 'rejected') this.reportRateLimit({ status: 'rejected', resets_at: null, limit_type: null });
      } else if (msg.is_error !== true && this.rateLimit === 'rejected') this.reportRateLimit({ status: 'allowed', resets_at: null, limit_type: null });
    }
  }

  private reportRateLimit(limit: { status: 'allowed' | 'allowed_warning' | 'rejected'; resets_at: number | null; limit_type: string | null }): void {
    this.rateLimit = limit.status;
    this.sink.report({ kind: 'rate_limit', ...limit });
  }

  private controlResponse(response: JsonObject): void {
    if (this.canReceive()) this.writeLine(JSON.stringify({ type: 'control_response', response }));
  }

  /**
   * A line too long to parse is known by its head (claude writes `type` and `request_id` first). A result still
   * ends the turn; a permission request is refused, since its input cannot be shown for review, and claude
   * would otherwise wait for an answer forever.
   */
  private onOverflow(head: string): void {
    const type = /^\{"type":"([a-z_]+)"/.exec(head)?.[1];
    if (type === 'result') this.turnEnded(null);
    const requestId = type === 'control_request' ? /"request_id":"([^"\\]+)"/.exec(head)?.[1] : undefined;
    if (requestId) {
      const error = `control request too large for brainstem to review (over ${MAX_LINE_CHARS} characters)`;
      this.controlResponse({ subtype: 'error', request_id: requestId, error });
    }
  }

  private onLine(line: string): void {
    let msg: StreamMessage;
    try {
      msg = JSON.parse(line) as StreamMessage;
    } catch {
      return; // Not protocol: it is in the log, nothing more.
    }
    if (!isObject(msg)) return;
    this.account(msg as Record<string, unknown>);
    if (msg.type === 'system' && msg.subtype === 'init') {
      this.takenUpTo(this.sent);
      // Every turn begins with one: the id is news only once.
      if (typeof msg.session_id === 'string' && msg.session_id !== this.sessionId) {
        this.sessionId = msg.session_id;
        this.sink.report({ kind: 'runtime_session', runtime_session_id: msg.session_id });
      }
    } else if (msg.type === 'user' && msg.isReplay === true && typeof msg.uuid === 'string') {
      const k = this.unechoed.get(msg.uuid);
      if (k !== undefined) this.takenUpTo(k);
    } else if (msg.type === 'assistant' || msg.type === 'user') {
      for (const activity of claudeActivity(msg)) this.sink.report({ kind: 'activity', activity });
    } else if (msg.type === 'result') {
      // Journaled, and shown to the brain: no larger than any text a request may carry.
      this.turnEnded(typeof msg.result === 'string' ? clipToTextLimit(msg.result) : null);
    } else if (msg.type === 'control_request' && typeof msg.request_id === 'string') {
      const req = msg.request;
      if (req?.subtype === 'can_use_tool' && typeof req.tool_name === 'string') {
        this.sink.report({ kind: 'permission_requested', request_id: msg.request_id, tool: req.tool_name, input: isObject(req.input) ? req.input : {} });
      } else {
        this.controlResponse({ subtype: 'error', request_id: msg.request_id, error: `unsupported control request ${String(req?.subtype)}` });
      }
    }
  }
}

export class ClaudeCodeRuntime implements SessionRuntime {
  readonly name = 'claude-code';
  readonly takesCommand = false;
  readonly executable = 'claude';
  readonly processPerTurn = false;

  constructor(private readonly runner: ProcessRunner) {}

  /** Without a prompt, claude waits for its first instruction. */
  startsIdle(hasPrompt: boolean): boolean {
    return !hasPrompt;
  }

  start(spec: LaunchSpec, sink: RuntimeSink, resume: string | null = null): WorkerHandle {
    const args = [...CLAUDE_ARGS, ...spec.profile_args, ...(resume ? ['--resume', resume] : []), ...spec.args];
    const env = { ...spec.env, ...claudeToolsUpFront(spec.env) };
    return new ClaudeWorker(this.runner.spawn({ command: this.executable, args, cwd: spec.cwd, env, sandbox: spec.sandbox }), this.runner, sink);
  }

  /**
   * The old process (whose pipes died with the service) is ended if it still runs; a new one continues the
   * conversation with --resume, unless there is none to continue or the session was being stopped.
   */
  recover(spec: RecoverySpec, sink: RuntimeSink): Recovery {
    if (spec.pid !== null && spec.pid_start_time !== null && this.runner.isAlive(spec.pid, spec.pid_start_time)) {
      this.runner.signalGroup(spec.pid, 'SIGKILL');
    }
    if (!spec.runtime_session_id || spec.stopping) return null;
    return { handle: this.start(spec, sink, spec.runtime_session_id), resumed: true };
  }
}
