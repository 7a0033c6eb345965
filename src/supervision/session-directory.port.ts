import { SideWrite } from '../journal/command-handler';

/** What supervision needs to know about sessions; the sessions module provides it. */
export interface SessionView {
  id: string;
  alias: string;
  state: string;
  /** Epoch ms when the session entered its state. */
  state_since: number;
  excluded: boolean;
  /** The worker has not exited. */
  active: boolean;
  /** The worker survived a service restart (alive with the same start time, or resumable). */
  recoverable: boolean;
  /** The node that runs the worker, when the sessions know it (nodes sharing a journal); absent: this node. */
  node?: string;
  /** What the worker's latest turn reported as its result; null when it reported none (or no turn ended yet). */
  last_result: string | null;
  /**
   * What a waiting session waits on: a question, a permission request (its tool, with its id and input), a blocked
   * reason; null otherwise.
   */
  waiting_on: WaitingOn | null;
  /** Epoch ms when what it waits on began: entering its state, or a later change within it (a new question, a new turn result). */
  attention_since: number;
  /** The git work tree the worker runs in (its worktree, or the checkout of its cwd); null outside git or unknown. */
  work_tree?: string | null;
  /** A claude started outside Brainstem: it joins supervision only by the user's choice. Absent: Brainstem's own. */
  external?: boolean;
  /** What a round's board shows of it besides its state; absent from directories that do not keep them. */
  facts?: SessionFacts;
}

export type WaitingOn =
  | { kind: 'question' | 'blocked'; text: string }
  /** `input` is the tool's input as the worker's runtime sent it (worker data). */
  | { kind: 'permission'; text: string; request_id: string; input: unknown };

/** A session's standing, as the sessions keep it: Brainstem's facts, no worker text. */
export interface SessionFacts {
  runtime: string;
  /** Why Brainstem holds it (loop, budget), or null. */
  held: string | null;
  /** The pattern of the latest loop detected, or null. */
  loop: string | null;
  /** Until when its model's rate limit holds it (epoch ms; 0: no reset time said), or null when not limited or parked. */
  rate_limited_until: number | null;
  /** Parked at its model's limit: why, and when it resumes by itself (epoch ms; null: kept parked); null otherwise. */
  parked: { reason: 'usage_limit' | 'rate_limit'; resumes_at: number | null } | null;
  spend_usd: number;
  budget_usd: number | null;
  /** How many deny rules its Agent Profile gives it (a pending request matched none of them). */
  deny_rules: number;
  /** Its git worktree (isolation worktree), or null. */
  worktree: { branch: string; base: string | null; state: string; merged: boolean } | null;
  /** Its worker runs with the user's full rights (not in the OS sandbox). */
  unsandboxed: boolean;
}

/** A session's last turn result as a round shows it; null when it reported none (or only blanks): its output is shown then. */
export function turnResultOf(last_result: string | null): string | null {
  return last_result?.trim() ? last_result : null;
}

/** What the node that runs a session's worker gave of its output as a round started: its last lines, or why none. */
export type OutputElsewhere = { lines: string[] } | { unanswered: string };

/** Keeps exited sessions in memory past their retention while it needs them (a running workflow run naming them). */
export interface SessionHolder {
  holds(sessionId: string): boolean;
  /** Settles once the holder has loaded what it holds: no session is evicted before. */
  loaded: Promise<unknown>;
}

export interface SessionDirectory {
  /** The sessions in memory: every live one, and exited ones until their retention has passed. */
  list(): SessionView[];
  /** One session by cs_ id; undefined when unknown. */
  get(id: string): SessionView | undefined;
  /**
   * The write that sets a session's exclusion from supervision (its session.exclusion_changed at the session's stream
   * version now), to append beside the supervision event that decides it; its apply step is the session adopting it.
   * Null when the session is unknown or already so.
   */
  exclusionWrite(id: string, excluded: boolean, actor: string): SideWrite | null;
  holdWhile(holder: SessionHolder): void;
  /** The last lines of a session's output; none for an unknown session. */
  outputTail(id: string, lines: number): string[];
  /**
   * The last lines of the output of those of these sessions whose worker another node runs and whose last turn reported
   * no result (turnResultOf: their evidence is their output, round-prompt.ts workerEvidence), each asked of its owner at once; an owner
   * that has not answered within `withinMs` is unanswered. Never rejects. Sessions run here are not in the answer:
   * outputTail reads them.
   */
  outputTailsElsewhere(ids: readonly string[], lines: number, withinMs: number): Promise<ReadonlyMap<string, OutputElsewhere>>;
  /** Whether sessions created from now on start excluded from supervision (scope `only`), unless their request says. */
  excludeNewSessions(excluded: boolean): void;
  /**
   * Holds a session whose loop persisted (SessionsService.hold: no more turns until the user releases it, its turn
   * under way interrupted); a session held already stays as it was. Whether this call held it.
   */
  hold(id: string, reason: 'loop', detail: string, by: string): Promise<boolean>;
  /** Whether external sessions reporting from now on join supervision (include_external); they do not by default. */
  includeNewExternalSessions(included: boolean): void;
}

export const SESSION_DIRECTORY = Symbol('SessionDirectory');
