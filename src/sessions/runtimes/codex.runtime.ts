import { SESSION_ENV } from '../../profiles/emitters/emitter-support';
import { clipToTextLimit } from '../session.dto';
import { LineSplitter, MAX_LINE_CHARS } from '../session-log';
import { ProcessRunner, WorkerProcess } from './process-runner';
import { LaunchSpec, Recovery, RecoverySpec, RuntimeSink, SessionRuntime, WorkerHandle } from './runtime.port';

export const CODEX_ARGS = ['exec', '--json'];

/** How long a finished turn waits for the rest of its output once the process exited (a descendant may hold the pipe). */
export const OUTPUT_DRAIN_MS = 1000;

type ExecEvent = {
  type?: unknown;
  thread_id?: unknown;
  item?: { type?: unknown; text?: unknown };
  error?: { message?: unknown };
  message?: unknown;
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What one `codex exec` process told us about its turn. */
class Turn {
  lastMessage: string | null = null;
  failure: string | null = null;

  /** The brain sees the agent's last message, or why the turn went wrong. */
  result(code: number | null, signal: string | null): string | null {
    if (this.failure !== null) return clipToTextLimit(`codex turn failed: ${this.failure}`);
    if (this.lastMessage !== null) return clipToTextLimit(this.lastMessage);
    if (signal !== null || code !== 0) return `codex exited with ${signal ?? `code ${code}`} before answering`;
    return null;
  }
}

/**
 * A Codex conversation: one `codex exec --json` process per turn (the prompt on its stdin), later turns with
 * `resume <thread id>`. Between turns nothing runs. A message sent during a turn waits for it to end and goes
 * in the next one, so the session sees one turn end, not two. `codex exec` asks no permissions: the profile's
 * approval_policy and sandbox_mode decide.
 */
class CodexConversation implements WorkerHandle {
  readonly attachment = 'attached' as const;
  private proc: WorkerProcess | null = null;
  private queued: string[] = [];
  private stopping = false;
  private ended = false;
  /** Let go by a service shutting down: what the turn does next is no longer ours to report. */
  private released = false;

  constructor(
    private readonly spec: LaunchSpec,
    private readonly runner: ProcessRunner,
    private readonly sink: RuntimeSink,
    private threadId: string | null,
  ) {}

  get pid(): number | null {
    return this.proc?.pid ?? null;
  }

  get startTime(): string | null {
    return this.proc?.startTime ?? null;
  }

  canReceive(): boolean {
    return !this.ended && !this.stopping;
  }

  send(text: string): void {
    if (this.proc) this.queued.push(text);
    else this.runTurn(text);
  }

  resolvePermission(): void {
    // codex exec has no permission channel.
  }

  /** Any signal from the service ends the conversation: a running turn gets it, an idle one ends at once. */
  signal(signal: NodeJS.Signals): boolean {
    if (this.ended) return false;
    this.stopping = true;
    this.queued = [];
    if (this.proc?.pid != null) return this.runner.signalGroup(this.proc.pid, signal);
    this.end(null, null, null);
    return false;
  }

  release(): void {
    this.released = true;
    if (!this.proc) return;
    this.proc.stdin.destroy();
    this.proc.stdout.destroy();
    this.proc.stderr.destroy();
  }

  private runTurn(text: string): void {
    const resume = this.threadId ? ['resume', this.threadId] : [];
    // Options go before `resume`: after it, codex takes only its global flags.
    const args = [...CODEX_ARGS, ...this.spec.profile_args, ...this.spec.args, ...resume, '-'];
    const proc = this.runner.spawn({ command: 'codex', args, cwd: this.spec.cwd, env: this.spec.env });
    this.proc = proc;
    const turn = new Turn();
    const lines = new LineSplitter((line) => this.onLine(turn, line), MAX_LINE_CHARS);
    let outputEnded = false;
    let exit: { code: number | null; signal: string | null; error: Error | null } | null = null;
    let drain: NodeJS.Timeout | null = null;
    const finish = () => {
      if (!exit || this.proc !== proc || this.released) return;
      if (drain) clearTimeout(drain);
      this.proc = null;
      this.turnEnded(turn, exit.code, exit.signal, exit.error);
    };
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (c: string) => {
      this.sink.output(Buffer.from(c));
      lines.push(c);
    });
    proc.stdout.on('close', () => {
      outputEnded = true;
      finish();
    });
    proc.stderr.on('data', (c: Buffer) => this.sink.output(c));
    proc.onExit((code, signal, error) => {
      exit = { code, signal, error };
      if (outputEnded || error) finish();
      else (drain = setTimeout(finish, OUTPUT_DRAIN_MS)).unref();
    });
    // A prompt on stdin, not in argv, which caps one argument at 128 KiB.
    proc.stdin.end(text);
  }

  private onLine(turn: Turn, line: string): void {
    let event: ExecEvent;
    try {
      event = JSON.parse(line) as ExecEvent;
    } catch {
      return; // Not protocol: it is in the log, nothing more.
    }
    if (!isObject(event)) return;
    if (event.type === 'thread.started' && typeof event.thread_id === 'string' && event.thread_id !== this.threadId) {
      this.threadId = event.thread_id;
      this.sink.report({ kind: 'runtime_session', runtime_session_id: event.thread_id });
    } else if (event.type === 'item.completed' && isObject(event.item) && event.item.type === 'agent_message' && typeof event.item.text === 'string') {
      turn.lastMessage = event.item.text;
    } else if (event.type === 'turn.failed' && isObject(event.error) && typeof event.error.message === 'string') {
      turn.failure = event.error.message;
    } else if (event.type === 'error' && typeof event.message === 'string') {
      turn.failure ??= event.message;
    }
  }

  private turnEnded(turn: Turn, code: number | null, signal: string | null, error: Error | null): void {
    // Stopped, unable to start, or failed before a thread existed: there is no conversation to continue.
    if (this.stopping || error || this.threadId === null) {
      this.end(code, signal, error);
      return;
    }
    if (this.queued.length > 0) {
      this.runTurn(this.queued.splice(0).join('\n\n'));
      return;
    }
    this.sink.report({ kind: 'turn_ended', result: turn.result(code, signal) });
  }

  private end(code: number | null, signal: string | null, error: Error | null): void {
    if (this.ended) return;
    this.ended = true;
    this.sink.report({ kind: 'exited', code, signal, spawn_error: error ? error.message : null });
  }
}

export class CodexRuntime implements SessionRuntime {
  readonly name = 'codex';
  readonly takesCommand = false;
  readonly executable = 'codex';
  readonly processPerTurn = true;

  constructor(private readonly runner: ProcessRunner) {}

  /** Without a prompt nothing runs until the first instruction. */
  startsIdle(hasPrompt: boolean): boolean {
    return !hasPrompt;
  }

  start(spec: LaunchSpec, sink: RuntimeSink): WorkerHandle {
    return new CodexConversation(spec, this.runner, sink, null);
  }

  /**
   * A turn that ran across the restart lost its pipes, and with them its answer: it is ended, and the
   * conversation continues with `resume` at the next message, unless there is none to continue or the
   * session was being stopped.
   */
  recover(spec: RecoverySpec, sink: RuntimeSink): Recovery {
    this.runner.signalByEnv(SESSION_ENV, spec.session_id, 'SIGKILL');
    if (!spec.runtime_session_id || spec.stopping) return null;
    return { handle: new CodexConversation(spec, this.runner, sink, spec.runtime_session_id), resumed: true };
  }
}
