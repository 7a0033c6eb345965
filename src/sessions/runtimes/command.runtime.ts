import { ProcessRunner } from './process-runner';
import { LaunchSpec, Recovery, RecoverySpec, RuntimeSink, SessionRuntime, WorkerHandle } from './runtime.port';
import { AttachedWorker, DetachedWorker } from './worker-handles';

/** Any executable: messages go to its stdin as lines, its output to the session log, its exit code is kept. */
export class CommandRuntime implements SessionRuntime {
  readonly name = 'command';
  readonly takesCommand = true;
  readonly executable = null;
  readonly processPerTurn = false;

  constructor(private readonly runner: ProcessRunner) {}

  startsIdle(): boolean {
    return false;
  }

  start(spec: LaunchSpec, sink: RuntimeSink): WorkerHandle {
    if (!spec.command) throw new Error('the command runtime needs a command');
    const proc = this.runner.spawn({ command: spec.command, args: spec.args, cwd: spec.cwd, env: spec.env, sandbox: spec.sandbox });
    proc.stdout.on('data', (c: Buffer) => sink.output(c));
    return new AttachedWorker(proc, this.runner, sink);
  }

  /** Recoverable only while the very same process (pid and start time) is alive. */
  recover(spec: RecoverySpec, sink: RuntimeSink): Recovery {
    if (spec.pid === null || spec.pid_start_time === null || !this.runner.isAlive(spec.pid, spec.pid_start_time)) return null;
    return { handle: new DetachedWorker(spec.pid, spec.pid_start_time, this.runner, sink), resumed: false };
  }
}
