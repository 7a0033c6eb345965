import { JsonObject, PermissionDecision } from '../../sessions/session.events';
import { ModelUsage } from '../../usage/usage.model';
import type { LimitHit } from '../../sessions/session-limit.model';

/** What the hosted brain's runtime reports while a turn runs, in the order it happens. */
export type BrainActivity =
  /** The runtime's conversation id (claude's session id, codex's thread id, …): journaled, resumed after a restart. */
  | { kind: 'conversation'; id: string }
  /** A piece of the brain's text as the model produces it (streamed to the chat, not journaled). */
  | { kind: 'text_delta'; text: string }
  /** One complete message of the brain's text (posted to the chat). */
  | { kind: 'text'; text: string }
  /** A tool the brain called (a compact activity entry in the chat). */
  | { kind: 'tool_use'; name: string; input: JsonObject }
  /** How many tokens the conversation's context holds now, as the runtime reports it. */
  | { kind: 'usage'; context_tokens: number }
  /** What the turn used, per model, as its runtime said (journaled as brain.usage); `cumulative`: the conversation's running total. */
  | { kind: 'turn_usage'; entries: ModelUsage[]; cumulative?: true }
  /** The model API refused or failed (rate limit, authentication): posted to the chat. */
  | { kind: 'api_error'; message: string }
  /** The runtime asks to use a tool: the user decides, through the human gate; never allowed by itself. */
  | { kind: 'permission_requested'; request_id: string; tool: string; input: JsonObject };

/** How a turn ended. `text` is the brain's last message. */
export type BrainTurnEnd =
  | { outcome: 'completed'; text: string | null }
  | {
      outcome: 'failed';
      reason: string;
      /** The conversation could not be continued (unknown or broken id): a new one is needed. */
      resume_failed?: boolean;
      /** The runtime said the conversation's context is full: a new one is needed. */
      context_full?: boolean;
      /** Its model's usage or rate limit refused the turn: the brain parks until the reset (docs/guide/usage.md#usage-limits). */
      limit?: Omit<LimitHit, 'prompt'>;
    };

/**
 * Everything a brain runtime needs to start its process. Agents take it as `() => BrainLaunch`, read when they spawn:
 * the service's URL is known for certain only once it listens.
 */
export interface BrainLaunch {
  /** A directory of the brain's own (stable across restarts: claude keeps its conversations per directory). */
  cwd: string;
  /** The complete environment (BRAINSTEM_URL and the brain's BRAINSTEM_TOKEN included). */
  env: Record<string, string>;
  /** Brainstem's MCP server: URL of /mcp; the credential is in env as BRAINSTEM_TOKEN. */
  mcp_url: string;
  /** The brain's standing instructions (the orchestrator profile's system prompt). */
  instructions: string;
  /** The profile's model, if it names one. */
  model: string | null;
  /** Flags the profile's emitter gives the runtime (claude-code), if any. */
  profile_args: string[];
}

/**
 * One runtime hosting the main brain's conversation. A turn sends one prompt to the conversation `conversationId`
 * (null: start a new one) and resolves when the brain's turn ends. One turn at a time: the host never overlaps them.
 */
export interface BrainAgent {
  readonly runtime: string;
  /** The brain's process while one runs (claude's lives across turns; the others' only during one). */
  readonly pid: number | null;
  turn(prompt: string, conversationId: string | null, on: (activity: BrainActivity) => void): Promise<BrainTurnEnd>;
  /** Answers a permission_requested of the current turn; runtimes that ask none ignore it. */
  resolvePermission(requestId: string, decision: PermissionDecision, reason: string | null, input: JsonObject): void;
  /** Ends the running turn's process (the round timed out, the service stops); the turn resolves failed. */
  interrupt(reason: string): void;
  /** Lets go of every process (service shutdown); settles once they are gone, so a restart resumes a complete conversation. */
  close(): Promise<void>;
}
