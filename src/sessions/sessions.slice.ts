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
import { SessionSpending, SpendingSettings, UsageFacts } from './session-spending';
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
  /** The usage projection, for the day budgets; without it only session budgets hold. */
  usage?: UsageFacts;
  /** BRAINSTEM_BUDGET_USD_PER_DAY and the price table; none and empty when absent. */
  spending?: SpendingSettings;
}

export interface SessionsSlice {
  registry: SessionRegistry;
  commands: SessionCommands;
  workers: SessionWorkers;
  service: SessionsService;
  spending: SessionSpending;
}

/** The sessions slice, composed: the Nest module builds it from its providers, a spec from in-memory adapters. */
export function sessionsSlice(deps: SessionsSliceDeps): SessionsSlice {
  const registry = new SessionRegistry(deps.journal, deps.envs, { retention_s: deps.retention_s, nodes: deps.nodes, now: () => deps.clock.now() });
  const commands = new SessionCommands(deps.journal, registry, deps.clock);
  const output = new SessionOutput(deps.logsDir);
  const settings = deps.spending ?? { usd_per_day: null, prices: {} };
  // The workers interrupt a worker once its hold is journaled; spending decides the holds.
  const spending: SessionSpending = new SessionSpending(registry, commands, deps.profiles, deps.usage ?? null, settings, (actor) => workers.interrupt(actor));
  const workers = new SessionWorkers(registry, commands, deps.runtimes, deps.runner, workerEnvironment(deps.host, deps.endpoint), output, spending);
  const setup = new SessionSetup(deps.profiles, deps.workspace, deps.runtimes, deps.host, { max_sessions: deps.max_sessions });
  const service = new SessionsService(registry, commands, workers, output, setup, deps.ids, spending);
  return { registry, commands, workers, service, spending };
}
