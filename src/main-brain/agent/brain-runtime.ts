import { ConfigError } from '../../config/config.loader';
import { MainBrainDriver, MainBrainRuntime } from '../../config/config.schema';
import { findExecutable } from '../../common/executable';
import { AGENT_RUNTIMES } from '../../common/agent-runtimes';

export type DriverChoice = { driver: 'agent'; runtime: Exclude<MainBrainRuntime, 'auto'> } | { driver: Exclude<MainBrainDriver, 'auto' | 'agent'> };

/**
 * Which driver rounds go to, and which runtime hosts the brain. `auto` hosts it when an agent runtime is on PATH, and
 * otherwise publishes rounds (stream) for a brain the user brings. A hosted brain asked for (driver agent, or a named
 * runtime) whose executable is missing is a start-up error naming it.
 */
export function chooseBrainDriver(driver: MainBrainDriver, runtime: MainBrainRuntime, pathEnv: string, cwd: string): DriverChoice {
  if (driver !== 'auto' && driver !== 'agent') return { driver };
  const onPath = (exe: string) => findExecutable(exe, pathEnv, cwd) !== null;
  if (runtime === 'auto') {
    const found = AGENT_RUNTIMES.find((r) => onPath(r.executable));
    if (found) return { driver: 'agent', runtime: found.name as Exclude<MainBrainRuntime, 'auto'> };
    if (driver === 'auto') return { driver: 'stream' };
    throw new ConfigError([
      `BRAINSTEM_MAIN_BRAIN_DRIVER=agent: no agent runtime to host the main brain: none of ${AGENT_RUNTIMES.map((r) => r.executable).join(', ')} is on PATH (install one, or set BRAINSTEM_MAIN_BRAIN_RUNTIME)`,
    ]);
  }
  const executable = AGENT_RUNTIMES.find((r) => r.name === runtime)?.executable ?? runtime;
  if (!onPath(executable)) throw new ConfigError([`BRAINSTEM_MAIN_BRAIN_RUNTIME=${runtime}: the main brain's runtime is missing: ${executable} is not on PATH`]);
  return { driver: 'agent', runtime };
}
