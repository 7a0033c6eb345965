import { JsonObject, PermissionDecision } from '../session.events';
import { ProcessRunner, WorkerProcess } from './process-runner';
import { RuntimeSink, WorkerHandle } from './runtime.port';

export const DETACHED_POLL_MS = 1000;

/** The parts every attached worker shares: output to the log, exit reported once, stdin as lines. */
export class AttachedWorker implements WorkerHandle {
  readonly attachment = 'attached' as const;
  private exited = false;

  constructor(
    protected readonly proc: WorkerProcess,
    protected readonly runner: ProcessRunner,
    protected readonly sink: RuntimeSink,
  ) {
    proc.stderr.on('data', (c: Buffer) => sink.output(c));
    proc.onExit((code, signal, error) => {
      this.exited = true;
      sink.report({ kind: 'exited', code, signal, spawn_error: error ? error.message : null });
    });
  }

  get pid(): number | null {
    return this.proc.pid;
  }

  get startTime(): string | null {
    return this.proc.startTime;
  }

  canReceive(): boolean {
    return !this.exited && this.proc.stdin.writable;
  }

  send(text: string): void {
    this.writeLine(text);
  }

  resolvePermission(_requestId: string, _decision: PermissionDecision, _reason: string | null, _input: JsonObject): void {
    // A command worker that asked through a signal reads the outcome from its session status.
  }

  /** Reaches the group after the worker itself exited too: children it left there are still its to end. */
  signal(signal: NodeJS.Signals): boolean {
    return this.proc.pid !== null && this.runner.signalGroup(this.proc.pid, signal);
  }

  /** A command has no turns Brainstem knows of: it gets SIGINT, as Ctrl-C would give it, and decides what that means. */
  interrupt(): boolean {
    return this.signal('SIGINT');
  }

  release(): void {
    this.proc.stdin.destroy();
    this.proc.stdout.destroy();
    this.proc.stderr.destroy();
  }

  protected writeLine(line: string): void {
    this.proc.stdin.write(line.endsWith('\n') ? line : `${line}\n`);
  }
}

/**
 * A worker that outlived a service restart: its pipes went with the old service, so it can only be
 * watched (by pid and start time) and signalled. It keeps reporting through the HTTP signals.
 */
export class DetachedWorker implements WorkerHandle {
  readonly attachment = 'detached' as const;
  private timer: NodeJS.Timeout | null;

  constructor(
    readonly pid: number,
    readonly startTime: string | null,
    private readonly runner: ProcessRunner,
    sink: RuntimeSink,
    pollMs = DETACHED_POLL_MS,
  ) {
    this.timer = setInterval(() => {
      if (runner.isAlive(pid, startTime)) return;
      this.release();
      sink.report({ kind: 'exited', code: null, signal: null, spawn_error: null });
    }, pollMs);
    this.timer.unref();
  }

  canReceive(): boolean {
    return false;
  }

  send(): void {
    throw new Error('a detached worker cannot receive messages');
  }

  resolvePermission(): void {
    // Nothing to answer on: the worker reads its session status.
  }

  signal(signal: NodeJS.Signals): boolean {
    return this.runner.isAlive(this.pid, this.startTime) && this.runner.signalGroup(this.pid, signal);
  }

  interrupt(): boolean {
    return this.signal('SIGINT');
  }

  release(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
