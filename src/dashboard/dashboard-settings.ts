/**
 * What the page needs to know of the service's configuration (GET /dashboard/settings). Plain types, no imports:
 * the page (web/src) imports them too, so the two cannot drift.
 */
export interface DashboardSettings {
  /** When a wait counts as stalled. */
  stall_threshold_s: number;
  /** The runtimes a session can be started with, `auto` first: the start form's list. */
  session_runtimes: SessionRuntimeOption[];
  /** The runtimes a profile can target (its `target_runtime`). */
  profile_runtimes: string[];
}

export interface SessionRuntimeOption {
  name: string;
  /** Takes a command and its arguments (the command runtime). */
  takes_command: boolean;
  /** Whether its executable is on the service's PATH now; `auto` and command runtimes are always. */
  installed: boolean;
}
