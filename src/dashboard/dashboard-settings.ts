import type { SessionRuntimeOption } from '../sessions/runtimes/runtime-option';

/**
 * What the page needs to know of the service's configuration (GET /dashboard/settings). Plain types, and type imports
 * of plain types only: the page (web/src) imports them too, so the two cannot drift.
 */
export interface DashboardSettings {
  /** When a wait counts as stalled. */
  stall_threshold_s: number;
  /** The runtimes a session can be started with, `auto` first: the start form's list. */
  session_runtimes: SessionRuntimeOption[];
  /** The runtimes a profile can target (its `target_runtime`). */
  profile_runtimes: string[];
}
