import { PriceTable } from './price-table';

/** The typed configuration and the table of its knobs. Pure: no file or env access here. */

import type { NotifyConfig } from './notify-config';

/** `auto`: the hosted brain (`agent`) when an agent runtime is on PATH, else `stream`. */
export type MainBrainDriver = 'auto' | 'agent' | 'stream' | 'command' | 'webhook';
export type MainBrainRuntime = 'auto' | 'claude-code' | 'codex' | 'gemini-cli' | 'opencode';
export type AuthMode = 'token' | 'off';
/** BRAINSTEM_SANDBOX: `auto` sandboxes where the machine can, `required` refuses a session it cannot sandbox, `off` never sandboxes. */
export type SandboxMode = 'auto' | 'required' | 'off';
export const SANDBOX_MODES: readonly SandboxMode[] = ['auto', 'required', 'off'];
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface BrainstemConfig {
  server: { host: string; port: number; api_token: string | null; auth: AuthMode; allowed_hosts: string[]; body_limit_bytes: number };
  /** url: a postgres:// URL puts the events in that database instead of LevelDB in dir (dir still holds tokens and logs). */
  journal: { dir: string; url: string | null; sync: boolean; checkpoint_every: number };
  sessions: { max_sessions: number };
  /** Where sessions' git worktrees go, one folder per repository: BRAINSTEM_WORKTREES_DIR, else `<journal dir>/worktrees`. */
  worktrees: { dir: string; overlap_interval_s: number };
  /**
   * This service among the nodes sharing a PostgreSQL journal: its id (owner of the sessions it starts) and the lease
   * time after which a silent node counts as down and another takes the supervisor's lease; the base URL the other
   * nodes reach it at (null: the address it listens on).
   */
  node: { id: string; lease_ttl_s: number; url: string | null };
  supervision: {
    debounce_ms: number;
    restore_ttl_s: number;
    stall_watchdog_interval_s: number;
    stall_threshold_s: number;
    stall_cooldown_s: number;
    stall_watchdog_startup_delay_s: number;
  };
  /** When a worker counts as going round in circles, and what follows (docs/guide/loops.md); a profile's `loops:` overrides them. */
  loops: {
    repeated_call: number;
    alternation: number;
    repeated_failure: number;
    repeated_text: number;
    no_progress_s: number;
    cooldown_s: number;
    escalate_after: number;
  };
  main_brain: {
    driver: MainBrainDriver;
    round_timeout_s: number;
    command: string | null;
    webhook_url: string | null;
    /** The hosted brain's runtime, its profile, and the context size (tokens) past which its conversation is rotated. */
    runtime: MainBrainRuntime;
    profile: string;
    context_budget_tokens: number;
    /** Dollars the hosted brain may spend in a UTC day; null: no limit. */
    budget_usd: number | null;
  };
  /** Dollars everything (workers and the brain) may spend in a UTC day; null: no limit. */
  budget: { usd_per_day: number | null };
  /** Dollars per million tokens by model, for runtimes that report no cost (docs/guide/usage.md#prices). */
  prices: PriceTable;
  profiles: { dir: string };
  /**
   * Claude sessions started outside Brainstem (docs/guide/external-sessions.md): how long a supervised one's Stop hook
   * waits for the round its stop wakes, and its PermissionRequest hook for an answer, before claude goes on as usual.
   */
  external: { stop_wait_s: number; permission_wait_s: number };
  /**
   * The OS sandbox of workers (docs/operations/security.md): `auto` where the machine can, `required` refuses a session it
   * cannot sandbox, `off`; how long a sandboxed worker's connection to a host no rule decides waits for an answer.
   */
  sandbox: { mode: SandboxMode; ask_wait_s: number };
  /**
   * Workers parked at their model's usage or rate limit (docs/guide/usage.md#usage-limits): the backoff when the runtime
   * names no reset, the longest wait taken from a reset, and how many on one limit resume at once, how far apart.
   */
  limits: { backoff_base_s: number; backoff_max_s: number; max_wait_s: number; resume_batch: number; resume_stagger_s: number };
  plugins: string[];
  /** Seconds that exited sessions, ended rounds and converged workflow runs stay in memory (the journal keeps them). */
  retention_s: number;
  /** The least severe level logged. */
  log_level: LogLevel;
  /** Notifications to the person (src/notifications): where they go and the rules that keep them few (notify-config.ts). */
  notify: NotifyConfig;
}

type KnobKind =
  | { kind: 'int'; min: number; max: number }
  | { kind: 'string'; nullable?: boolean }
  | { kind: 'bool' }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'list' }
  /** A decimal number (dollars), or unset for none. */
  | { kind: 'number'; min: number; max: number; nullable: true }
  /** The price table: a YAML map, or its JSON in the environment. */
  | { kind: 'prices' };

export type Knob = { path: string; env: string } & KnobKind;

const INT32 = 2 ** 31 - 1;
/** The longest timer Node can arm, in seconds: a longer setTimeout fires after 1 ms instead. */
const TIMER_S = Math.floor(INT32 / 1000);

export const KNOBS: readonly Knob[] = [
  { path: 'server.host', env: 'BRAINSTEM_HOST', kind: 'string' },
  { path: 'server.port', env: 'BRAINSTEM_PORT', kind: 'int', min: 0, max: 65535 },
  { path: 'server.api_token', env: 'BRAINSTEM_API_TOKEN', kind: 'string', nullable: true },
  { path: 'server.auth', env: 'BRAINSTEM_AUTH', kind: 'enum', values: ['token', 'off'] },
  { path: 'server.allowed_hosts', env: 'BRAINSTEM_ALLOWED_HOSTS', kind: 'list' },
  { path: 'server.body_limit_bytes', env: 'BRAINSTEM_BODY_LIMIT_BYTES', kind: 'int', min: 1024, max: 1 << 30 },
  { path: 'journal.dir', env: 'BRAINSTEM_JOURNAL_DIR', kind: 'string' },
  { path: 'journal.url', env: 'BRAINSTEM_JOURNAL_URL', kind: 'string', nullable: true },
  { path: 'journal.sync', env: 'BRAINSTEM_JOURNAL_SYNC', kind: 'bool' },
  { path: 'journal.checkpoint_every', env: 'BRAINSTEM_JOURNAL_CHECKPOINT_EVERY', kind: 'int', min: 1, max: 1_000_000 },
  { path: 'sessions.max_sessions', env: 'BRAINSTEM_MAX_SESSIONS', kind: 'int', min: 1, max: 100_000 },
  { path: 'worktrees.dir', env: 'BRAINSTEM_WORKTREES_DIR', kind: 'string', nullable: true },
  { path: 'worktrees.overlap_interval_s', env: 'BRAINSTEM_WORKTREES_OVERLAP_INTERVAL_S', kind: 'int', min: 0, max: 86_400 },
  { path: 'node.id', env: 'BRAINSTEM_NODE_ID', kind: 'string' },
  { path: 'node.lease_ttl_s', env: 'BRAINSTEM_NODE_LEASE_TTL_S', kind: 'int', min: 1, max: 3600 },
  { path: 'node.url', env: 'BRAINSTEM_NODE_URL', kind: 'string', nullable: true },
  { path: 'supervision.debounce_ms', env: 'BRAINSTEM_SUPERVISION_DEBOUNCE_MS', kind: 'int', min: 0, max: 3_600_000 },
  { path: 'supervision.restore_ttl_s', env: 'BRAINSTEM_SUPERVISION_RESTORE_TTL_S', kind: 'int', min: 0, max: INT32 },
  // docs/architecture/decisions.md#environment-defaults: 0 or less disables the watchdog, so negative intervals are valid.
  { path: 'supervision.stall_watchdog_interval_s', env: 'BRAINSTEM_SUPERVISION_STALL_WATCHDOG_INTERVAL_S', kind: 'int', min: -INT32, max: TIMER_S },
  { path: 'supervision.stall_threshold_s', env: 'BRAINSTEM_SUPERVISION_STALL_THRESHOLD_S', kind: 'int', min: 0, max: INT32 },
  { path: 'supervision.stall_cooldown_s', env: 'BRAINSTEM_SUPERVISION_STALL_COOLDOWN_S', kind: 'int', min: 0, max: INT32 },
  { path: 'supervision.stall_watchdog_startup_delay_s', env: 'BRAINSTEM_SUPERVISION_STALL_WATCHDOG_STARTUP_DELAY_S', kind: 'int', min: 0, max: TIMER_S },
  { path: 'loops.repeated_call', env: 'BRAINSTEM_LOOP_REPEATED_CALL', kind: 'int', min: 0, max: 10_000 },
  { path: 'loops.alternation', env: 'BRAINSTEM_LOOP_ALTERNATION', kind: 'int', min: 0, max: 10_000 },
  { path: 'loops.repeated_failure', env: 'BRAINSTEM_LOOP_REPEATED_FAILURE', kind: 'int', min: 0, max: 10_000 },
  { path: 'loops.repeated_text', env: 'BRAINSTEM_LOOP_REPEATED_TEXT', kind: 'int', min: 0, max: 10_000 },
  { path: 'loops.no_progress_s', env: 'BRAINSTEM_LOOP_NO_PROGRESS_S', kind: 'int', min: 0, max: INT32 },
  { path: 'loops.cooldown_s', env: 'BRAINSTEM_LOOP_COOLDOWN_S', kind: 'int', min: 0, max: INT32 },
  { path: 'loops.escalate_after', env: 'BRAINSTEM_LOOP_ESCALATE_AFTER', kind: 'int', min: 0, max: 1000 },
  { path: 'main_brain.driver', env: 'BRAINSTEM_MAIN_BRAIN_DRIVER', kind: 'enum', values: ['auto', 'agent', 'stream', 'command', 'webhook'] },
  { path: 'main_brain.runtime', env: 'BRAINSTEM_MAIN_BRAIN_RUNTIME', kind: 'enum', values: ['auto', 'claude-code', 'codex', 'gemini-cli', 'opencode'] },
  { path: 'main_brain.profile', env: 'BRAINSTEM_MAIN_BRAIN_PROFILE', kind: 'string' },
  { path: 'main_brain.context_budget_tokens', env: 'BRAINSTEM_MAIN_BRAIN_CONTEXT_BUDGET_TOKENS', kind: 'int', min: 1000, max: 10_000_000 },
  { path: 'main_brain.budget_usd', env: 'BRAINSTEM_MAIN_BRAIN_BUDGET_USD', kind: 'number', min: 0.01, max: 1_000_000, nullable: true },
  { path: 'main_brain.round_timeout_s', env: 'BRAINSTEM_MAIN_BRAIN_ROUND_TIMEOUT_S', kind: 'int', min: 1, max: TIMER_S },
  { path: 'main_brain.command', env: 'BRAINSTEM_MAIN_BRAIN_COMMAND', kind: 'string', nullable: true },
  { path: 'main_brain.webhook_url', env: 'BRAINSTEM_MAIN_BRAIN_WEBHOOK_URL', kind: 'string', nullable: true },
  { path: 'budget.usd_per_day', env: 'BRAINSTEM_BUDGET_USD_PER_DAY', kind: 'number', min: 0.01, max: 1_000_000, nullable: true },
  { path: 'prices', env: 'BRAINSTEM_PRICES', kind: 'prices' },
  { path: 'profiles.dir', env: 'BRAINSTEM_PROFILES_DIR', kind: 'string' },
  { path: 'external.stop_wait_s', env: 'BRAINSTEM_EXTERNAL_STOP_WAIT_S', kind: 'int', min: 1, max: 3600 },
  { path: 'external.permission_wait_s', env: 'BRAINSTEM_EXTERNAL_PERMISSION_WAIT_S', kind: 'int', min: 1, max: 3600 },
  { path: 'sandbox.mode', env: 'BRAINSTEM_SANDBOX', kind: 'enum', values: SANDBOX_MODES },
  { path: 'sandbox.ask_wait_s', env: 'BRAINSTEM_SANDBOX_ASK_WAIT_S', kind: 'int', min: 1, max: 3600 },
  { path: 'limits.backoff_base_s', env: 'BRAINSTEM_LIMIT_BACKOFF_BASE_S', kind: 'int', min: 1, max: 86_400 },
  { path: 'limits.backoff_max_s', env: 'BRAINSTEM_LIMIT_BACKOFF_MAX_S', kind: 'int', min: 1, max: 86_400 },
  { path: 'limits.max_wait_s', env: 'BRAINSTEM_LIMIT_MAX_WAIT_S', kind: 'int', min: 60, max: 7 * 86_400 },
  { path: 'limits.resume_batch', env: 'BRAINSTEM_LIMIT_RESUME_BATCH', kind: 'int', min: 1, max: 1000 },
  { path: 'limits.resume_stagger_s', env: 'BRAINSTEM_LIMIT_RESUME_STAGGER_S', kind: 'int', min: 0, max: 3600 },
  { path: 'plugins', env: 'BRAINSTEM_PLUGINS', kind: 'list' },
  // At least a second: a session a running workflow run holds is looked at again each retention period.
  { path: 'retention_s', env: 'BRAINSTEM_RETENTION_S', kind: 'int', min: 1, max: INT32 },
  { path: 'log_level', env: 'BRAINSTEM_LOG_LEVEL', kind: 'enum', values: LOG_LEVELS },
  { path: 'notify.public_url', env: 'BRAINSTEM_PUBLIC_URL', kind: 'string', nullable: true },
  { path: 'notify.kinds', env: 'BRAINSTEM_NOTIFY_KINDS', kind: 'list' },
  { path: 'notify.quiet_hours', env: 'BRAINSTEM_NOTIFY_QUIET_HOURS', kind: 'string', nullable: true },
  { path: 'notify.merge_window_s', env: 'BRAINSTEM_NOTIFY_MERGE_WINDOW_S', kind: 'int', min: 0, max: 86_400 },
  { path: 'notify.digest_after', env: 'BRAINSTEM_NOTIFY_DIGEST_AFTER', kind: 'int', min: 1, max: 1000 },
  { path: 'notify.rate_per_minute', env: 'BRAINSTEM_NOTIFY_RATE_PER_MINUTE', kind: 'int', min: 1, max: 600 },
  { path: 'notify.action_ttl_s', env: 'BRAINSTEM_NOTIFY_ACTION_TTL_S', kind: 'int', min: 30, max: 86_400 },
  { path: 'notify.web_push', env: 'BRAINSTEM_NOTIFY_WEB_PUSH', kind: 'bool' },
  { path: 'notify.vapid_subject', env: 'BRAINSTEM_NOTIFY_VAPID_SUBJECT', kind: 'string' },
  { path: 'notify.ntfy_url', env: 'BRAINSTEM_NOTIFY_NTFY_URL', kind: 'string', nullable: true },
  { path: 'notify.ntfy_topic', env: 'BRAINSTEM_NOTIFY_NTFY_TOPIC', kind: 'string', nullable: true },
  { path: 'notify.ntfy_token', env: 'BRAINSTEM_NOTIFY_NTFY_TOKEN', kind: 'string', nullable: true },
  { path: 'notify.webhook_url', env: 'BRAINSTEM_NOTIFY_WEBHOOK_URL', kind: 'string', nullable: true },
  { path: 'notify.webhook_format', env: 'BRAINSTEM_NOTIFY_WEBHOOK_FORMAT', kind: 'enum', values: ['brainstem', 'slack'] },
];

/** The command-line flag of a knob: BRAINSTEM_JOURNAL_DIR -> --journal-dir. */
export function flagOf(knob: Knob): string {
  return '--' + knob.env.replace(/^BRAINSTEM_/, '').toLowerCase().replace(/_/g, '-');
}
