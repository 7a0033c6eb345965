import { LaunchSpec, Recovery, RuntimeSink, SessionRuntime, WorkerHandle } from '../../src/sessions/runtimes/runtime.port';

/**
 * A runtime without processes, for the sessions benchmark: the actor, journal and HTTP path are real,
 * the worker is absent. Stop reports an exit at once; nothing survives a restart.
 */
export class InertRuntime implements SessionRuntime {
  readonly name = 'inert';
  readonly takesCommand = false;
  readonly executable = null;
  readonly processPerTurn = true;

  startsIdle(): boolean {
    return false;
  }

  start(_spec: LaunchSpec, sink: RuntimeSink): WorkerHandle {
    let alive = true;
    return {
      pid: null,
      startTime: null,
      attachment: 'attached',
      canReceive: () => alive,
      send: () => undefined,
      resolvePermission: () => undefined,
      signal: () => {
        if (!alive) return false;
        alive = false;
        queueMicrotask(() => sink.report({ kind: 'exited', code: null, signal: 'SIGTERM', spawn_error: null }));
        return true;
      },
      release: () => undefined,
    };
  }

  recover(): Recovery {
    return null;
  }
}
