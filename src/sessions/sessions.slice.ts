import { NodeDirectory } from '../cluster/node-directory.port';
import { Journal } from '../journal/journal.port';
import { SessionCommands } from './session.commands';
import { SessionEnvStore } from './session-env.store';
import { SessionOutput } from './session-output';
import { SessionProfiles } from './session-profiles.port';
import { Clock, IdGenerator, SessionHost, WorkerEndpoint } from './session.ports';
import { SessionRegistry } from './session.registry';
import { SessionSetup } from './session-setup';
import { SessionWorkers, workerEnvironment } from './session-workers';
import { SessionWorkspace } from './session-workspace.port';
import { SessionsService } from './sessions.service';
import { ProcessRunner } from './runtimes/process-runner';
import { RuntimeCatalog } from './runtimes/runtime-catalog';

/** Everything the sessions slice runs on: the journal, and one adapter per port. */
export interface SessionsSliceDeps {
  journal: Journal;
  runtimes: RuntimeCatalog;
  runner: ProcessRunner;
  profiles: SessionProfiles;
  workspace: SessionWorkspace;
  envs: SessionEnvStore;
  host: SessionHost;
  endpoint: WorkerEndpoint;
  clock: Clock;
  ids: IdGenerator;
  /** Where workers' output is logged. */
  logsDir: string;
  max_sessions: number;
  /** How long an exited session stays in memory; absent keeps every session. */
  retention_s?: number;
  /** The nodes sharing the journal; alone on it when absent. */
  nodes?: NodeDirectory;
}

export interface SessionsSlice {
  registry: SessionRegistry;
  commands: SessionCommands;
  workers: SessionWorkers;
  service: SessionsService;
}

/** The sessions slice, composed: the Nest module builds it from its providers, a spec from in-memory adapters. */
export function sessionsSlice(deps: SessionsSliceDeps): SessionsSlice {
  const registry = new SessionRegistry(deps.journal, deps.envs, { retention_s: deps.retention_s, nodes: deps.nodes, now: () => deps.clock.now() });
  const commands = new SessionCommands(deps.journal, registry, deps.clock);
  const output = new SessionOutput(deps.logsDir, deps.host.home);
  const workers = new SessionWorkers(registry, commands, deps.runtimes, deps.runner, workerEnvironment(deps.host, deps.endpoint), output);
  const setup = new SessionSetup(deps.profiles, deps.workspace, deps.runtimes, deps.host, { max_sessions: deps.max_sessions });
  const service = new SessionsService(registry, commands, workers, output, setup, deps.ids, deps.runner);
  return { registry, commands, workers, service };
}
