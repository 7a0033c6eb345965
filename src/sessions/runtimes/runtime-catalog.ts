import { AGENT_RUNTIMES } from '../../common/agent-runtimes';
import { findExecutable } from '../../common/executable';
import { RuntimeFact, SessionRefusal } from '../session.decider';
import { SessionRuntimeOption } from './runtime-option';
import { SessionRuntime } from './runtime.port';

export interface RuntimeRequest {
  runtime?: string;
  command?: string;
  cwd: string;
  pathEnv: string;
}

/** The runtimes the service can run, and the rules that pick one for a request (all refusals are 400s). */
export class RuntimeCatalog {
  private readonly runtimes = new Map<string, SessionRuntime>();

  /** `lookupDir`: where a relative entry of PATH is looked in (the service's working directory). */
  constructor(
    runtimes: SessionRuntime[],
    private readonly lookupDir = '/',
  ) {
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
      installed: r.takesCommand || !r.executable || findExecutable(r.executable, pathEnv, this.lookupDir) !== null,
    }));
    return [{ name: 'auto', takes_command: false, installed: true }, ...named];
  }

  /** The runtime for the request, with its command resolved on `pathEnv`; or why none can run it. */
  choose(req: RuntimeRequest): RuntimeFact {
    let name = req.runtime ?? (req.command !== undefined ? 'command' : 'auto');
    if (name === 'auto') {
      if (req.command !== undefined) name = 'command';
      else {
        const found = AGENT_RUNTIMES.find((a) => findExecutable(a.executable, req.pathEnv, req.cwd) !== null);
        if (!found) return refusal('runtime_not_installed', `runtime auto: none of ${AGENT_RUNTIMES.map((a) => a.executable).join(', ')} is on PATH`);
        name = found.name;
      }
    }
    const runtime = this.runtimes.get(name);
    if (!runtime) return refusal('unknown_runtime', `runtime: unknown runtime ${JSON.stringify(name)} (known: auto, ${[...this.runtimes.keys()].join(', ')})`);
    if (runtime.takesCommand) {
      if (req.command === undefined) return refusal('command_required', `command: required for the ${name} runtime`);
      const command = findExecutable(req.command, req.pathEnv, req.cwd);
      if (!command) return refusal('command_not_executable', `command: ${JSON.stringify(req.command)} is not an executable on PATH`);
      return { name, command };
    }
    if (req.command !== undefined) return refusal('command_not_taken', `command: only the command runtime takes a command, not ${name}`);
    if (runtime.executable && !findExecutable(runtime.executable, req.pathEnv, req.cwd)) return refusal('runtime_not_installed', `runtime ${name}: executable ${runtime.executable} is not on PATH`);
    return { name, command: null };
  }
}

function refusal(code: SessionRefusal['code'], message: string): RuntimeFact {
  return { refusal: { code, message } };
}
