/**
 * Usage and rate limits (docs/guide/usage.md#usage-limits), pure: a worker whose turn its model's limit refused is
 * parked, not failed, until the limit resets, then resumed with a short "continue" (or the prompt it never got to).
 * Time, jitter and the service's settings come in the commands; the service arms the timers (session-parking.ts).
 * The model (this file) imports nothing of the session's, so events, context and runtimes can name it.
 */

/** `usage_limit`: the account's or plan's own limit (claude's 5-hour window, codex's plan); `rate_limit`: a 429 throttle. */
export type LimitReason = 'usage_limit' | 'rate_limit';
/** Where `resumes_at` came from: the runtime's reset, Brainstem's backoff, or the user or brain keeping it parked. */
/** Where its resume time came from: the runtime's reset, a backoff, someone who kept it parked, or its fallback session going on. */
export type ParkSource = 'runtime' | 'backoff' | 'user' | 'fallback';

/** What a runtime says of a turn its model's limit refused or cut short. */
export interface LimitHit {
  reason: LimitReason;
  /** When the limit resets (epoch ms), when the runtime says. */
  resets_at: number | null;
  /** Which limit (claude's `five_hour`, …), when the runtime says. */
  limit_type: string | null;
  /** The turn's own prompt, when the turn never got as far as the model (a per-turn runtime with no thread yet). */
  prompt: string | null;
}

/** A parked session, as its context keeps it. */
export interface Parked {
  reason: LimitReason;
  /** When it resumes by itself (epoch ms); null: kept parked until someone resumes it. */
  resumes_at: number | null;
  source: ParkSource;
  limit_type: string | null;
  /** Which refusal in a row this is (the backoff grows with it); a turn that ends normally starts the count again. */
  attempt: number;
  /** What the resume sends: the interrupted prompt, or null for CONTINUE_TEXT. */
  prompt: string | null;
  since: number;
  /** Kept parked because a session under its profile's on_limit.fallback_profile goes on with its work. */
  fallback_session_id?: string;
}

/** What a parked worker is sent at its resume, when its conversation holds the turn the limit cut short. */
export const CONTINUE_TEXT = 'Your model usage limit has reset. Continue where you stopped.';

/** The service's settings for parking (BRAINSTEM_LIMIT_*). */
export interface LimitSettings {
  /** The first backoff when the runtime names no reset; it doubles each refusal in a row. */
  backoff_base_ms: number;
  backoff_max_ms: number;
  /** A reset further away than this is taken as this (and logged): a runtime's clock or a parse gone wrong. */
  max_wait_ms: number;
  /** How many sessions parked on one limit resume at once, and how long each batch waits for the one before it. */
  resume_batch: number;
  resume_stagger_ms: number;
}

export const DEFAULT_LIMIT_SETTINGS: LimitSettings = {
  backoff_base_ms: 60_000,
  backoff_max_ms: 30 * 60_000,
  max_wait_ms: 24 * 3_600_000,
  resume_batch: 3,
  resume_stagger_ms: 20_000,
};

/** The settings from the service's configuration (seconds). */
export function limitSettings(c: { backoff_base_s: number; backoff_max_s: number; max_wait_s: number; resume_batch: number; resume_stagger_s: number }): LimitSettings {
  return {
    backoff_base_ms: c.backoff_base_s * 1000,
    backoff_max_ms: Math.max(c.backoff_base_s, c.backoff_max_s) * 1000,
    max_wait_ms: c.max_wait_s * 1000,
    resume_batch: c.resume_batch,
    resume_stagger_ms: c.resume_stagger_s * 1000,
  };
}

/**
 * When a refused session resumes: the runtime's reset, clamped into [at + a second, at + max_wait], else an exponential
 * backoff (base · 2^(attempt-1), capped, with up to 20% jitter). `clamped` says why a reset was not taken as given.
 */
export function resumeTime(
  at: number,
  limit: Pick<LimitHit, 'resets_at'>,
  attempt: number,
  settings: LimitSettings,
  jitter: number,
): { resumes_at: number; source: 'runtime' | 'backoff'; clamped: 'past' | 'far' | null } {
  if (limit.resets_at !== null) {
    // A reset already past (a clock skew, a retry that raced it) still gets a second: the worker is not hammered.
    if (limit.resets_at < at + 1000) return { resumes_at: at + 1000, source: 'runtime', clamped: limit.resets_at < at ? 'past' : null };
    if (limit.resets_at > at + settings.max_wait_ms) return { resumes_at: at + settings.max_wait_ms, source: 'runtime', clamped: 'far' };
    return { resumes_at: limit.resets_at, source: 'runtime', clamped: null };
  }
  const exp = settings.backoff_base_ms * 2 ** Math.min(Math.max(attempt - 1, 0), 30);
  const wait = Math.min(settings.backoff_max_ms, Math.round(exp * (1 + 0.2 * Math.min(Math.max(jitter, 0), 1))));
  return { resumes_at: at + wait, source: 'backoff', clamped: null };
}

/** The command a turn refused by its limit is decided with: the settings, and the jitter its backoff gets. */
export type LimitCommandOf = (limit: LimitHit) => { type: 'report_limit'; limit: LimitHit; settings: LimitSettings; jitter: number };

export const limitCommandOf =
  (settings: LimitSettings, random: () => number): LimitCommandOf =>
  (limit) => ({ type: 'report_limit', limit, settings, jitter: random() });

/** A parked session as the resume schedule sees it. */
export interface ParkedEntry {
  id: string;
  /** Sessions on one account and limit share it: they resume staggered. */
  key: string;
  resumes_at: number;
  since: number;
}

/**
 * When each parked session resumes: at its own time, except that on one key (account and limit) no more than
 * `resume_batch` go at once; each later batch waits `resume_stagger_ms` after the one before it, counting the resumes
 * already made on the key (`resumed`, their times in order). Ordered by time, then by when they parked, then by id, so
 * the schedule comes out the same after a restart.
 */
export function resumeSchedule(
  entries: readonly ParkedEntry[],
  settings: Pick<LimitSettings, 'resume_batch' | 'resume_stagger_ms'>,
  resumed: ReadonlyMap<string, readonly number[]> = new Map(),
): Map<string, number> {
  const byKey = new Map<string, ParkedEntry[]>();
  for (const e of entries) byKey.set(e.key, [...(byKey.get(e.key) ?? []), e]);
  const out = new Map<string, number>();
  const batch = Math.max(1, settings.resume_batch);
  for (const [key, list] of byKey) {
    const ordered = [...list].sort((a, b) => a.resumes_at - b.resumes_at || a.since - b.since || (a.id < b.id ? -1 : 1));
    const fires: number[] = [...(resumed.get(key) ?? [])];
    for (const e of ordered) {
      const i = fires.length;
      const at = Math.max(e.resumes_at, i >= batch ? fires[i - batch] + settings.resume_stagger_ms : -Infinity);
      fires.push(at);
      out.set(e.id, at);
    }
  }
  return out;
}
