/**
 * When a worker counts as going round in circles, and what follows: the service's thresholds (BRAINSTEM_LOOP_*), which
 * a profile's `loops:` section overrides field by field for its sessions. 0 turns a pattern (or the escalation) off.
 */
export interface LoopThresholds {
  /** The same tool call with the same arguments this many times in a row. */
  repeated_call: number;
  /** Two calls alternating (A, B, A, B, …) for this many rounds of both. */
  alternation: number;
  /** The same call failing the same way (exit code and output) this many times, with no success of it between. */
  repeated_failure: number;
  /** This many turns in a row ending with the same text. */
  repeated_text: number;
  /** Seconds of activity with nothing new in it (NO_PROGRESS_MIN_ACTIONS actions at least). */
  no_progress_s: number;
  /** Seconds a (session, pattern) stays quiet after a detection. */
  cooldown_s: number;
  /** Wake-ups of the main brain for the same loop before the session is held and the user asked. */
  escalate_after: number;
}

export const DEFAULT_LOOP_THRESHOLDS: LoopThresholds = {
  repeated_call: 5,
  alternation: 4,
  repeated_failure: 5,
  repeated_text: 3,
  no_progress_s: 900,
  cooldown_s: 300,
  escalate_after: 3,
};

/** A stretch counts as no progress only when the worker kept acting through it: a silent worker is waiting, not looping. */
export const NO_PROGRESS_MIN_ACTIONS = 10;

export const LOOP_THRESHOLD_KEYS = Object.keys(DEFAULT_LOOP_THRESHOLDS) as readonly (keyof LoopThresholds)[];

/** The service's thresholds with a profile's overrides on top (absent fields keep the service's). */
export function effectiveThresholds(service: LoopThresholds, profile: Partial<LoopThresholds> | undefined): LoopThresholds {
  if (!profile) return service;
  const out = { ...service };
  for (const k of LOOP_THRESHOLD_KEYS) if (typeof profile[k] === 'number') out[k] = profile[k];
  return out;
}

/** Whether any pattern is on: with none, a session has no detector at all (nothing is even looked at). */
export function detects(limits: LoopThresholds): boolean {
  return limits.repeated_call > 0 || limits.alternation > 0 || limits.repeated_failure > 0 || limits.repeated_text > 0 || limits.no_progress_s > 0;
}
