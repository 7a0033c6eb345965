import type { SandboxPolicy } from '../sandbox/sandbox-policy';
import type { LoopPattern } from './loops/loop-pattern';
import type { LoopThresholds } from './loops/loop-thresholds';
import { Budget, BudgetScope, BudgetUnit } from '../usage/budget.rules';
import { PricedUsage } from '../usage/usage.model';
import type { LimitReason, ParkSource } from './session-limit.model';

/**
 * The facts a session journals (stream `session-<cs_id>`). Each one is also the event fed to the
 * session machine: `{type, ...data}`, so replay folds the stream through the same pure transitions.
 * Times are epoch milliseconds from the injected clock, carried in the data so replay is deterministic.
 */
import { WORKTREE_EVENT_TYPES, WorktreeEventData } from './session-worktree';

export type SessionState = 'starting' | 'working' | 'pending_handling' | 'pending_authorization' | 'pending_decision' | 'exited';
export type ProgressStatus = 'working' | 'completed' | 'blocked' | 'needs_review';
export type ExitReason = 'exited' | 'signaled' | 'stopped' | 'lost_on_restart' | 'spawn_failed' | 'vanished' | 'setup_failed';
/** attached: the service holds the worker's pipes; detached: alive after a restart, reachable only by signals. */
export type Attachment = 'none' | 'attached' | 'detached';
export type PermissionDecision = 'allow' | 'deny';
/**
 * How a person's message reached a session: `chat`, an answer posted in the main chat (answer_to); `send_to_session`,
 * the main brain's tool (or the user calling it); `session_messages`, POST /coding-sessions/:id/messages (the
 * dashboard's reply, `brainstem send`).
 */
export type MessageVia = 'chat' | 'send_to_session' | 'session_messages';
/**
 * Why a session is held (it gets no more turns until released): a loop that persisted after the brain was woken for
 * it, or a budget reached. Held sessions keep their state; a release lets messages reach the worker again.
 */
export type HoldReason = 'loop' | 'budget';

export interface Hold {
  reason: HoldReason;
  /** What the user reads: which loop or which budget, in plain words. */
  detail: string;
  since: number;
}

export type JsonObject = { [key: string]: unknown };

/**
 * The latest loop detected in a session (session.loop_detected): shown on it until `until`, its cooldown's end. The
 * summary is Brainstem's words; the evidence is the worker's text (at most 2 KiB), to be quoted as data.
 */
export interface LoopRecord {
  pattern: LoopPattern;
  count: number;
  since: number;
  at: number;
  until: number;
  signature: string;
  summary: string;
  evidence: string;
}

/** What claude says of its account's rate limit: ok, close to it, or refused until `resets_at`. */
export type RateLimitStatus = 'allowed' | 'allowed_warning' | 'rejected';

export interface RateLimit {
  status: RateLimitStatus;
  /** When the limit resets (epoch ms), when the runtime says. */
  resets_at: number | null;
  /** Which limit (claude's `five_hour`, `seven_day`, …), when the runtime says. */
  limit_type: string | null;
  since: number;
}

/** Who runs the session: a worker Brainstem started, or a claude started outside Brainstem that reports through its hooks. */
export type SessionOrigin = 'brainstem' | 'external';

/** What an external session is bound to at its first report (docs/guide/external-sessions.md). */
export interface ExternalBinding {
  /** claude's own session id: the same across a resume, so every run of it is this session. */
  claude_session_id: string;
  /** Its transcript, under ~/.claude/projects; null when the report named one elsewhere (then none is read). */
  transcript_path: string | null;
}

export interface PermissionRequest {
  request_id: string;
  tool: string;
  input: JsonObject;
}

export type Pending = { kind: 'question'; question: string } | ({ kind: 'permission' } & PermissionRequest) | { kind: 'blocked'; reason: string };

/** The pending permission request named by `requestId`, else the oldest; undefined when none (or not that one) is pending. */
export function pendingPermission(
  s: { pending: Pending | null; queued_permissions: readonly PermissionRequest[] },
  requestId?: string,
): PermissionRequest | undefined {
  if (s.pending?.kind !== 'permission') return undefined;
  return requestId === undefined ? s.pending : [s.pending, ...s.queued_permissions].find((p) => p.request_id === requestId);
}

export interface LastProgress {
  status: ProgressStatus;
  message: string | null;
  at: number;
}

/**
 * Who decided a sandboxed worker's connection to a host (session.network_decided): the user or the main brain answering
 * its `Network` request, the profile's rules or the user's earlier allow for this session as it arrived, or the wait's
 * end: no answer in time, the session's exit, the launcher gone, the request cleared as the session moved on.
 */
export type NetworkDecider = 'user' | 'brain' | 'profile' | 'session' | 'timeout' | 'exited' | 'abandoned' | 'withdrawn';
/** How far a user's allow of a host reaches: this connection, every later one of the session, or the profile's allow list. */
export type NetworkScope = 'once' | 'session' | 'profile';
export const NETWORK_SCOPES: readonly NetworkScope[] = ['once', 'session', 'profile'];

/** One network fact as the session keeps it (the latest NETWORK_LOG_MAX): a decision, or a refusal srt made on its own. */
export type NetworkRecord =
  | ({ kind: 'decided' } & SessionEventData['session.network_decided'])
  | ({ kind: 'refused' } & SessionEventData['session.network_refused']);

/** What a session is created with; the data of `session.created` and the machine's input. */
/**
 * Whether the worker runs in the OS sandbox (docs/operations/security.md), under which policy, or why not (`off`, the
 * machine lacks bubblewrap…). Absent in sessions created before sandboxing: they ran unsandboxed.
 */
export type SessionSandbox = { on: true; policy: SandboxPolicy } | { on: false; reason: string };

export interface SessionInput {
  id: string;
  alias: string;
  title: string;
  runtime: string;
  profile_id: string | null;
  cwd: string;
  command: string | null;
  args: string[];
  /**
   * Flags the runtime gets from the session's profile (claude-code: `--settings` etc.), journaled so a resume
   * after a restart runs with the configuration the session started with. Absent in sessions created before profiles applied.
   */
  profile_args?: string[];
  /** Environment from the session's profile (opencode: OPENCODE_CONFIG), journaled for the same reason. */
  profile_env?: Record<string, string>;
  /**
   * The profile's deny rules (permissions.deny, then tools.deny) when the session started: its worker runs with them,
   * so no later edit of the profile loosens what may be allowed in it. Absent in sessions created before they were kept.
   */
  permission_deny?: string[];
  env: Record<string, string>;
  excluded: boolean;
  /** The profile's `loops:` overrides of the service's loop thresholds, as the session started with them; absent when none. */
  loops?: Partial<LoopThresholds>;
  created_at: number;
  /**
   * The node that started the session: it runs (and after a restart recovers) the worker; other nodes follow the
   * session and leave the effects of its commands to it. Absent in sessions created before nodes.
   */
  node?: string;
  /** `worktree`: the worker runs in a git worktree of its own (session.worktree_created). Absent before isolation: none. */
  isolation?: 'none' | 'worktree';
  /**
   * The git work tree the worker runs in: its worktree, or the checkout its cwd is in; null outside git. Two live
   * sessions in one are warned of. Absent in sessions created before it was kept.
   */
  work_tree?: string | null;
  /** The budget the request gave; absent: the profile's per-session budget, if any, applies. */
  budget?: Budget;
  /** Absent in sessions created before external sessions: `brainstem`. */
  origin?: SessionOrigin;
  /** Set for external sessions only. */
  external?: ExternalBinding;
  sandbox?: SessionSandbox;
}

/** A budget a turn took past 80% or to its limit (docs/guide/usage.md#budgets), as the session's stream records it. */
export interface BudgetCrossingData {
  at: number;
  scope: BudgetScope;
  unit: BudgetUnit;
  used: number;
  limit: number;
}

export interface SessionEventData extends WorktreeEventData {
  'session.started': { at: number; pid: number | null; pid_start_time: string | null; idle: boolean };
  'session.runtime_session_assigned': { at: number; runtime_session_id: string };
  /** `via`: the path a person's message came by (who sent it is the event's actor); absent on a start's prompt. */
  'session.message_dispatched': { at: number; text: string; via?: MessageVia };
  'session.progress': { at: number; status: ProgressStatus; message: string | null };
  'session.blocked': { at: number; reason: string };
  'session.asked_human': { at: number; question: string };
  'session.context_requested': { at: number; query: string };
  /**
   * superseded: the worker has a next turn to run for messages this turn did not take up (one sent as the
   * turn ended, or queued by claude during it), so the session stays working; absent otherwise.
   */
  'session.turn_ended': { at: number; result: string | null; superseded?: true };
  'session.permission_requested': { at: number; request_id: string; tool: string; input: JsonObject };
  /**
   * A request answered. One a profile's deny matched is denied as it arrives, never pending: `by: 'profile'`, the
   * `rule` that matched, and the request's `tool` and `input` (no session.permission_requested records them). Bash in a
   * sandboxed session whose profile lets it run unasked is allowed as it arrives the same way: `by: 'sandbox'`, no
   * rule. These are absent on every other answer.
   */
  'session.permission_resolved': {
    at: number;
    request_id: string;
    decision: PermissionDecision;
    reason: string | null;
    by?: 'profile' | 'sandbox';
    rule?: string;
    tool?: string;
    input?: JsonObject;
  };
  'session.exclusion_changed': { at: number; excluded: boolean };
  'session.stop_requested': { at: number; deadline_at: number };
  'session.recovered': { at: number; attachment: Attachment; pid: number | null; pid_start_time: string | null; resumed: boolean };
  'session.exited': { at: number; code: number | null; signal: string | null; reason: ExitReason };
  'session.held': { at: number; reason: HoldReason; detail: string };
  /** by: who released it (the user, or the budget that was raised). */
  'session.released': { at: number; by: string };
  /**
   * The worker goes round in circles (docs/guide/loops.md): the pattern, how many times, since when, the loop's
   * signature (the same while it is the same loop), Brainstem's summary and the worker's evidence (at most 2 KiB, data);
   * the pattern stays quiet for the session until cooldown_until; escalate_after: the wake-ups of the main brain for
   * this loop after which the session is held (0: never).
   */
  'session.loop_detected': {
    at: number;
    pattern: LoopPattern;
    count: number;
    since: number;
    signature: string;
    summary: string;
    evidence: string;
    cooldown_until: number;
    escalate_after: number;
  };
  /** One model's usage of a worker's turn (several models in a turn: one each, with the same `turn`). */
  'session.usage': { at: number; turn: number } & PricedUsage;
  /** The session's own budget, set at start or changed (PATCH …/budget); null: its profile's per-session budget applies. */
  'session.budget_set': { at: number; budget: Budget | null };
  'session.budget_warning': BudgetCrossingData;
  /** A turn reached a budget's limit: the session is held with it (and, for a day's budget, so are the others it covers). */
  'session.budget_exceeded': BudgetCrossingData;
  /** The worker's runtime said its rate-limit state changed. */
  'session.rate_limited': { at: number; status: RateLimitStatus; resets_at: number | null; limit_type: string | null };
  /** An external session's claude runs: its first report, a new process for it, or a resume after it ended. */
  'session.external_run': { at: number; pid: number | null; pid_start_time: string | null };
  /** An external session's claude works again: a prompt was submitted, or a tool (named) is about to run. */
  'session.external_activity': { at: number; activity: 'prompt' | 'tool'; tool: string | null };
  /**
   * A sandboxed worker's connection to a host no sandbox rule decided, decided: `by` who (NetworkDecider); `rule`, the
   * profile's or the session's entry that matched; `request_id`, the `Network` permission request it answered, when one
   * was raised; `scope`, how far a user's allow reaches.
   */
  'session.network_decided': {
    at: number;
    host: string;
    port: number;
    decision: PermissionDecision;
    by: NetworkDecider;
    reason: string | null;
    request_id?: string;
    rule?: string;
    scope?: NetworkScope;
  };
  /** A connection the sandbox refused on its own (a deny rule of its policy), as the launcher reported it. */
  'session.network_refused': { at: number; host: string; port: number; reason: string };
  /**
   * The worker's turn was refused or cut short by its model's limit (docs/guide/usage.md#usage-limits): it waits, still
   * active, until `resumes_at` (null: until someone resumes it), then goes on. `attempt`: refusals in a row; `prompt`: what
   * the resume sends when the model never saw the turn's own (else a short "continue"). A reset the runtime named outside
   * what Brainstem waits for is `clamped`, with the one `reported`.
   */
  'session.parked': {
    at: number;
    reason: LimitReason;
    resumes_at: number | null;
    source: ParkSource;
    limit_type: string | null;
    attempt: number;
    prompt: string | null;
    clamped?: 'past' | 'far';
    reported_resets_at?: number | null;
    /** source fallback: the session that goes on with its work under its profile's on_limit.fallback_profile. */
    fallback_session_id?: string;
  };
  /** A parked session resumed: by its timer at the reset, or by the user or the brain (its resume message follows). */
  'session.unparked': { at: number; by: 'timer' | 'user' | 'main_brain' };
}

export type SessionEventType = keyof SessionEventData;

/** A machine event: the journaled type plus its data. */
export type SessionEvent = { [K in SessionEventType]: { type: K } & SessionEventData[K] }[SessionEventType];
export type SessionEventOf<K extends SessionEventType> = Extract<SessionEvent, { type: K }>;

/**
 * A session's creation as the decider answers it and evolve folds it: its whole input, env values included (the
 * journal keeps only their names, see createdData). `at` is its created_at.
 */
export interface SessionCreated {
  type: 'session.created';
  at: number;
  input: SessionInput;
}

/** What the session decider decides and its evolve folds: the creation, then the machine's events. */
export type SessionFact = SessionCreated | SessionEvent;

/** Journaled beside the facts for consumers (supervision); derived, so replay skips it. */
export interface SessionStateChangedData {
  at: number;
  from: SessionState;
  to: SessionState;
  /** The type of the event that moved the state, appended just before this record; absent in journals written before it was kept. */
  cause?: SessionEvent['type'];
}

/**
 * The journaled form of a session's input: env values are often secrets, and the journal is append-only and
 * readable by every audit, SSE client and plugin, so it names them (`env_keys`) and the SessionEnvStore keeps
 * the values. Journals written before that carry `env` itself.
 */
export type SessionCreatedData = Omit<SessionInput, 'env'> & { env_keys: string[]; env?: Record<string, string> };

export function createdData(input: SessionInput): SessionCreatedData {
  const { env, ...rest } = input;
  return { ...rest, env_keys: Object.keys(env) };
}

/** The input back from its journaled form, with the env values kept outside the journal (or, in old journals, inside). */
export function inputFromCreated(data: SessionCreatedData, env: Record<string, string> | null): SessionInput {
  // The names are the values' keys: nothing to take from them.
  const { env_keys: _names, env: journaled, ...rest } = data;
  return { ...rest, env: env ?? journaled ?? {} };
}

/** Appended to the `sessions` stream: the index of every session, and the alias counter. */
export interface SessionAliasAssignedData {
  session_id: string;
  alias: string;
  number: number;
}

/** Every session.* record on the bus, registered in the DomainEventMap below. */
export interface SessionEventMap extends SessionEventData {
  'session.created': SessionCreatedData;
  'session.state_changed': SessionStateChangedData;
  'session.alias_assigned': SessionAliasAssignedData;
}

declare module '../bus/domain-event' {
  interface DomainEventMap extends SessionEventMap {}
}

export const SESSIONS_STREAM = 'sessions';
export const sessionStream = (id: string): string => `session-${id}`;

export type SessionJournalEvent = { [K in SessionEventType]: { type: K; data: SessionEventData[K] } }[SessionEventType];

export function toJournalEvent(event: SessionEvent): SessionJournalEvent {
  const { type, ...data } = event;
  return { type, data } as SessionJournalEvent;
}

const FACT_TYPES: ReadonlySet<string> = new Set<SessionEventType>([
  'session.started',
  'session.runtime_session_assigned',
  'session.message_dispatched',
  'session.progress',
  'session.blocked',
  'session.asked_human',
  'session.context_requested',
  'session.turn_ended',
  'session.permission_requested',
  'session.permission_resolved',
  'session.exclusion_changed',
  'session.stop_requested',
  'session.recovered',
  'session.exited',
  'session.held',
  'session.released',
  'session.loop_detected',
  ...WORKTREE_EVENT_TYPES,
  'session.usage',
  'session.budget_set',
  'session.budget_warning',
  'session.budget_exceeded',
  'session.rate_limited',
  'session.external_run',
  'session.external_activity',
  'session.network_decided',
  'session.network_refused',
  'session.parked',
  'session.unparked',
]);

/** A journaled record back as a machine event, or null for derived records (state_changed, created). */
export function fromJournalEvent(type: string, data: unknown): SessionEvent | null {
  if (!FACT_TYPES.has(type)) return null;
  return { type, ...(data as object) } as SessionEvent;
}

/** Every record a session's stream holds: its facts, and the state changes derived from them. */
export type SessionRecord = SessionFact | ({ type: 'session.state_changed' } & SessionStateChangedData);

/** A record as the journal stores it. */
export function encodeRecord(record: SessionRecord): SessionJournalRecord {
  switch (record.type) {
    case 'session.created':
      return { type: record.type, data: createdData(record.input) };
    case 'session.state_changed': {
      const { type, ...data } = record;
      return { type, data };
    }
    default:
      return toJournalEvent(record);
  }
}

export type SessionJournalRecord =
  | SessionJournalEvent
  | { type: 'session.created'; data: SessionCreatedData }
  | { type: 'session.state_changed'; data: SessionStateChangedData };

/**
 * A stored record back as a fact, or null for a derived one. `env`: the creation's env values, kept outside the
 * journal; `node`: the node a session created before nodes is taken as (the reader's own).
 */
export function decodeRecord(e: { type: string; data: unknown }, context: { env: Record<string, string> | null; node: string }): SessionFact | null {
  if (e.type !== 'session.created') return fromJournalEvent(e.type, e.data);
  const input = inputFromCreated(e.data as SessionCreatedData, context.env);
  return { type: 'session.created', at: input.created_at, input: input.node === undefined ? { ...input, node: context.node } : input };
}
