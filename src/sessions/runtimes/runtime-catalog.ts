import { DomainError } from '../../common/domain-error';
import { AGENT_RUNTIMES } from '../../common/agent-runtimes';
import { findExecutable } from '../../common/executable';
import { SessionRuntimeOption } from '../../dashboard/dashboard-settings';
import { SessionRuntime } from './runtime.port';


export interface RuntimeChoice {
  runtime: SessionRuntime;
  /** The resolved executable of a command runtime; null for agent runtimes. */
  command: string | null;
}

export interface RuntimeRequest {
  runtime?: string;
  command?: string;
  cwd: string;
  pathEnv: string;
}

/** The runtimes the service can run, and the rules that pick one for a request (all failures are 400s). */
export class RuntimeCatalog {
  private readonly runtimes = new Map<string, SessionRuntime>();

  constructor(runtimes: SessionRuntime[]) {
    for (const r of runtimes) this.register(r);
  }

  /** Adds a runtime (benchmarks and tests add a process-less one). */
  register(runtime: SessionRuntime): void {
    this.runtimes.set(runtime.name, runtime);
  }

  get(name: string): SessionRuntime | undefined {
    return this.runtimes.get(name);
  }

  /** Each runtime a request may name, `auto` first, and whether its executable is on `pathEnv`. */
  options(pathEnv: string): SessionRuntimeOption[] {
    const named = [...this.runtimes.values()].map((r) => ({
      name: r.name,
      takes_command: r.takesCommand,
      installed: r.takesCommand || !r.executable || findExecutable(r.executable, pathEnv, process.cwd()) !== null,
    }));
    return [{ name: 'auto', takes_command: false, installed: true }, ...named];
  }

  choose(req: RuntimeRequest): RuntimeChoice {
    let name = req.runtime ?? (req.command !== undefined ? 'command' : 'auto');
    if (name === 'auto') name = req.command !== undefined ? 'command' : this.firstInstalled(req);
    const runtime = this.runtimes.get(name);
    if (!runtime) throw new DomainError('unknown_runtime', `runtime: unknown runtime ${JSON.stringify(name)} (known: auto, ${[...this.runtimes.keys()].join(', ')})`);
    if (runtime.takesCommand) {
      if (req.command === undefined) throw new DomainError('command_required', `command: required for the ${name} runtime`);
      const command = findExecutable(req.command, req.pathEnv, req.cwd);
      if (!command) throw new DomainError('command_not_executable', `command: ${JSON.stringify(req.command)} is not an executable on PATH`);
      return { runtime, command };
    }
    if (req.command !== undefined) throw new DomainError('command_not_taken', `command: only the command runtime takes a command, not ${name}`);
    if (runtime.executable && !findExecutable(runtime.executable, req.pathEnv, req.cwd)) throw new DomainError('runtime_not_installed', `runtime ${name}: executable ${runtime.executable} is not on PATH`);
    return { runtime, command: null };
  }

  private firstInstalled(req: RuntimeRequest): string {
    const found = AGENT_RUNTIMES.find((a) => findExecutable(a.executable, req.pathEnv, req.cwd) !== null);
    if (!found) throw new DomainError('runtime_not_installed', `runtime auto: none of ${AGENT_RUNTIMES.map((a) => a.executable).join(', ')} is on PATH`);
    return found.name;
  }
}
