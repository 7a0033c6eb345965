import type { SandboxPolicy } from '../../sandbox/sandbox-policy';
import { ModelUsage } from '../../usage/usage.model';
import { Attachment, JsonObject, PermissionDecision, RateLimitStatus } from '../session.events';
import type { LimitHit } from '../session-limit.model';

/**
 * What a worker did, as its runtime's stream shows it: a tool call (with the call id the runtime gives it, if any) and
 * what came back (ok or not, the exit code where the runtime says it, the output cut to ACTIVITY_OUTPUT_MAX_BYTES). Read
 * by the loop detector on the node that runs the worker; never journaled, one event at a time (too much): only what the
 * detector finds is. `opaque`: the runtime does not show the call's arguments (codex's file changes name only the files).
 */
export type WorkerActivity =
  | { kind: 'tool_call'; call_id: string | null; tool: string; input: JsonObject; opaque?: true }
  | { kind: 'tool_result'; call_id: string | null; ok: boolean; exit_code: number | null; output: string };

/** What a worker reports to its session (beside its output, which goes to the session log). */
export type RuntimeReport =
  | { kind: 'activity'; activity: WorkerActivity }
  | { kind: 'runtime_session'; runtime_session_id: string }
  /**
   * turn: how many of the turns given (turnsStarted) this end completes, from workers that count them; limit: the
   * model's usage or rate limit refused the turn (the session parks until its reset).
   */
  | { kind: 'turn_ended'; result: string | null; turn?: number; limit?: LimitHit }
  | { kind: 'permission_requested'; request_id: string; tool: string; input: JsonObject }
  | { kind: 'exited'; code: number | null; signal: string | null; spawn_error: string | null }
  /**
   * What a turn used, one entry per model, as the runtime said it (checked where it is counted). `cumulative`: the
   * runtime reports the thread's running total (codex), of which the turn's part is what is new.
   */
  | { kind: 'usage'; entries: ModelUsage[]; cumulative?: true }
  /** The runtime's rate-limit state (claude's `rate_limit_event`, or a rate-limit error). */
  | { kind: 'rate_limit'; status: RateLimitStatus; resets_at: number | null; limit_type: string | null };

export interface RuntimeSink {
  output(chunk: Buffer): void;
  report(report: RuntimeReport): void;
  /**
   * Settles once everything reported so far has been acted on (its commands decided): a worker that would start a
   * turn of its own waits for it, so a turn whose usage holds the session is the last one.
   */
  reported?(): Promise<void>;
}

export interface LaunchSpec {
  session_id: string;
  cwd: string;
  /** The command runtime's executable (resolved); null for agent runtimes, which know theirs. */
  command: string | null;
  args: string[];
  /** Flags from the session's profile, for runtimes that take their configuration by flags (claude-code). */
  profile_args: string[];
  /** The complete environment of the worker. */
  env: Record<string, string>;
  /**
   * The OS sandbox the worker runs in (session.created's policy); null: unsandboxed. Inside it the runtime's own
   * sandbox is turned off (runtime-own-sandbox.ts).
   */
  sandbox: SandboxPolicy | null;
}

/** What survived a restart, as the journal knows it. */
export interface RecoverySpec extends LaunchSpec {
  pid: number | null;
  pid_start_time: string | null;
  runtime_session_id: string | null;
  /** A stop was requested before the restart: a worker is needed only to be ended, never resumed. */
  stopping: boolean;
}

/** The service's hold on one worker. */
export interface WorkerHandle {
  readonly pid: number | null;
  readonly startTime: string | null;
  readonly attachment: Exclude<Attachment, 'none'>;
  /**
   * How many turns it has been given, for workers that can say which of them a turn end completes (one per
   * process for per-turn runtimes, one per message for claude-code): a turn end short of it is superseded.
   */
  readonly turnsStarted?: number;
  /** Whether messages can be delivered (attached with an open stdin). */
  canReceive(): boolean;
  send(text: string): void;
  /** Answers a runtime's own permission request; runtimes without one ignore it. */
  resolvePermission(requestId: string, decision: PermissionDecision, reason: string | null, input: JsonObject): void;
  /** Signals the worker's process group; false when nothing was there to signal. */
  signal(signal: NodeJS.Signals): boolean;
  /** Lets go of pipes and timers without touching the process (service shutdown). */
  release(): void;
  /**
   * Ends the turn under way, where the runtime allows, and keeps the worker (a session held for a loop or its budget):
   * claude-code is sent its `interrupt` control request, a per-turn runtime's turn process is ended and messages waiting
   * for a next turn are dropped, a command worker gets SIGINT. False when there was nothing to interrupt.
   */
  interrupt?(): boolean;
}

export type Recovery = { handle: WorkerHandle; resumed: boolean } | null;

/** One runtime per file in this folder, all behind this interface. */
export interface SessionRuntime {
  readonly name: string;
  /** Whether it runs the `command` of the request (which must then be an executable on PATH). */
  readonly takesCommand: boolean;
  /** An executable of its own that must be on PATH, if any. */
  readonly executable: string | null;
  /** One process per turn and none between turns (codex exec): a handle without a pid is idle, not failed. */
  readonly processPerTurn: boolean;
  /** Whether the worker waits for a first instruction when started without a prompt. */
  startsIdle(hasPrompt: boolean): boolean;
  start(spec: LaunchSpec, sink: RuntimeSink): WorkerHandle;
  /** Re-attaches, resumes, or returns null when the worker is lost. */
  recover(spec: RecoverySpec, sink: RuntimeSink): Recovery;
}
