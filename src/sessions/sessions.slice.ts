import { SandboxSetup } from '../sandbox/sandbox-setup';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { NodeDirectory } from '../cluster/node-directory.port';
import { NodePeers, noPeers } from '../cluster/node-peers.port';
import { PeerClient } from '../cluster/peer-client';
import { WorktreeGit } from '../worktrees/worktree-git.port';
import { Journal } from '../journal/journal.port';
import { SessionCommands } from './session.commands';
import { SessionEnvStore } from './session-env.store';
import { SessionOutput } from './session-output';
import { SessionOutputReads } from './session-output-reads';
import { SessionProfiles } from './session-profiles.port';
import { Clock, IdGenerator, SessionHost, WorkerEndpoint } from './session.ports';
import { SessionRegistry } from './session.registry';
import { SessionSetup } from './session-setup';
import { SessionWorkers, workerEnvironment } from './session-workers';
import { SessionWorkspace } from './session-workspace.port';
import { SessionsService } from './sessions.service';
import { SessionWorktreeSetup } from './session-worktree-setup';
import { SessionWorktrees } from './session-worktrees';
import { SessionSpending, SpendingSettings, UsageFacts } from './session-spending';
import { ProcessRunner } from './runtimes/process-runner';
import { SessionLoops } from './loops/session-loops';
import { DEFAULT_LOOP_THRESHOLDS, LoopThresholds } from './loops/loop-thresholds';
import { RuntimeCatalog } from './runtimes/runtime-catalog';
import { DEFAULT_LIMIT_SETTINGS, LimitSettings, limitCommandOf } from './session-limit.model';
import { SessionParking } from './session-parking';
import { SessionFallbacks } from './session-fallback';

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
  /** How this node calls the others (to read the output of their sessions), and how long it waits for an answer. */
  peers?: NodePeers;
  peer_timeout_ms?: number;
  /** The service's loop thresholds (BRAINSTEM_LOOP_*); the defaults when absent. */
  loops?: LoopThresholds;
  /** Git, for worktree isolation, and where the worktrees go (BRAINSTEM_WORKTREES_DIR). */
  git: WorktreeGit;
  worktrees_dir: string;
  /** How long an operation taken for another node's session waits for that node to perform it. */
  worktree_op_timeout_ms?: number;
  /** The usage projection, for the day budgets; without it only session budgets hold. */
  usage?: UsageFacts;
  /** BRAINSTEM_BUDGET_USD_PER_DAY and the price table; none and empty when absent. */
  spending?: SpendingSettings;
  /** How long a sandboxed worker's connection waits for an answer (BRAINSTEM_SANDBOX_ASK_WAIT_S); its default when absent. */
  network?: { ask_wait_s: number };
  /** The OS sandbox of workers (BRAINSTEM_SANDBOX); workers run unsandboxed when absent. */
  sandbox?: SandboxSetup;
  /** Parking at a model's limit (BRAINSTEM_LIMIT_*); the defaults when absent. */
  limits?: LimitSettings;
  /** The backoff's jitter, in [0, 1); Math.random when absent. */
  random?: () => number;
}

/** BRAINSTEM_SANDBOX_ASK_WAIT_S's default (src/config/config.schema.ts). */
const ASK_WAIT_S = 120;

/** A call to another node waits this long for its answer, by default (the default lease time: a node silent that long is down). */
const PEER_TIMEOUT_MS = 6000;

/** An operation on a worktree waits this long for the node that owns the session, by default. */
const WORKTREE_OP_TIMEOUT_MS = 120_000;

export interface SessionsSlice {
  registry: SessionRegistry;
  commands: SessionCommands;
  workers: SessionWorkers;
  worktrees: SessionWorktrees;
  service: SessionsService;
  spending: SessionSpending;
  parking: SessionParking;
}

/** The sessions slice, composed: the Nest module builds it from its providers, a spec from in-memory adapters. */
export function sessionsSlice(deps: SessionsSliceDeps): SessionsSlice {
  const registry = new SessionRegistry(deps.journal, deps.envs, { retention_s: deps.retention_s, nodes: deps.nodes, now: () => deps.clock.now() });
  const commands = new SessionCommands(deps.journal, registry, deps.clock);
  const output = new SessionOutput(deps.logsDir, deps.host.home);
  const loops = new SessionLoops(deps.loops ?? DEFAULT_LOOP_THRESHOLDS, () => deps.clock.now(), (actor, body) => commands.execute(actor, body));
  const fallbacks = new SessionFallbacks(registry, commands, deps.profiles, async (id) => {
    const sent = (await deps.journal.readStream(`session-${id}`)).find((e) => e.type === 'session.message_dispatched');
    return sent ? (sent.data as { text: string }).text : null;
  });
  commands.observeWith((actor, facts) => {
    parking.facts(facts);
    fallbacks.facts(actor, facts);
    return loops.facts(actor, facts);
  });
  const environment = workerEnvironment(deps.host, deps.endpoint);
  const isolation = new SessionWorktreeSetup(deps.git, deps.worktrees_dir, deps.runner, availableParallelism());
  const setup = new SessionSetup(deps.profiles, deps.workspace, deps.runtimes, deps.host, { max_sessions: deps.max_sessions }, isolation, deps.sandbox ?? null);
  const settings = deps.spending ?? { usd_per_day: null, prices: {} };
  // The workers interrupt a worker once its hold is journaled; spending decides the holds.
  const spending: SessionSpending = new SessionSpending(registry, commands, deps.profiles, deps.usage ?? null, settings, (actor) => workers.interrupt(actor));
  const limits = deps.limits ?? DEFAULT_LIMIT_SETTINGS;
  const workers = new SessionWorkers(registry, commands, deps.runtimes, deps.runner, environment, output, setup, loops, spending, limitCommandOf(limits, deps.random ?? Math.random));
  const parking = new SessionParking(registry, commands, workers, limits);
  const retention_ms = deps.retention_s === undefined ? Infinity : deps.retention_s * 1000;
  // Reads of another node's session (its output, its diff) ask the owner with this node's credential.
  const peers = new PeerClient(deps.peers ?? noPeers, deps.peer_timeout_ms ?? PEER_TIMEOUT_MS);
  const worktrees = new SessionWorktrees(registry, commands, deps.git, isolation, environment, output, peers, {
    retention_ms,
    // Often enough to follow a short retention, at most once a minute.
    sweep_ms: Math.min(60_000, Math.max(1000, Number.isFinite(retention_ms) ? retention_ms : 60_000)),
    op_timeout_ms: deps.worktree_op_timeout_ms ?? WORKTREE_OP_TIMEOUT_MS,
    now: () => deps.clock.now(),
    newOpId: () => `op_${randomBytes(6).toString('hex')}`,
  });
  // A session whose worktree is still on disk stays in memory: its work can still be merged, kept or discarded.
  const worktreeKept = (id: string): boolean => {
    const w = registry.find(id)?.context.worktree;
    return w !== null && w !== undefined && w.state !== 'removed';
  };
  registry.holdWhile({ holds: worktreeKept, loaded: Promise.resolve() });
  const reads = new SessionOutputReads(registry, output, peers);
  const service = new SessionsService(registry, commands, workers, output, setup, deps.ids, worktrees, spending, deps.runner, reads, deps.network ?? { ask_wait_s: ASK_WAIT_S }, parking);
  fallbacks.startWith((dto) => service.create(dto));
  return { registry, commands, workers, worktrees, service, spending, parking };
}
