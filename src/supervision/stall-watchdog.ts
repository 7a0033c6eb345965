import { EMPTY, Observable, SchedulerLike, asyncScheduler, timer } from 'rxjs';

/** States that need handling; a supervised session that stays in one too long has stalled (docs/architecture/decisions.md#what-wakes-the-main-brain). */
export const STALL_KINDS = ['pending_handling', 'pending_authorization', 'pending_decision'] as const;
export type StallKind = (typeof STALL_KINDS)[number];

export interface WatchdogConfig {
  stall_watchdog_interval_s: number;
  stall_threshold_s: number;
  stall_cooldown_s: number;
  stall_watchdog_startup_delay_s: number;
}

export interface WatchedSession {
  id: string;
  alias: string;
  state: string;
  /** Epoch ms when the session entered its current state. */
  state_since: number;
  supervised: boolean;
}

export interface Stall {
  session_id: string;
  alias: string;
  kind: StallKind;
  stalled_for_s: number;
  /** Epoch ms until which the same (session, kind) cannot fire again. */
  cooldown_until: number;
}

export const cooldownKey = (sessionId: string, kind: StallKind) => `${sessionId}:${kind}`;

const isStallKind = (state: string): state is StallKind => (STALL_KINDS as readonly string[]).includes(state);

/**
 * One scan: supervised sessions in a state needing handling for at least the threshold, whose
 * (session, kind) is not cooling down. Cooldowns are timestamps so they survive a restart via the journal.
 */
export function scanForStalls(
  now: number,
  sessions: readonly WatchedSession[],
  cooldownUntil: ReadonlyMap<string, number>,
  config: WatchdogConfig,
): Stall[] {
  const threshold = config.stall_threshold_s * 1000;
  const stalls: Stall[] = [];
  for (const s of sessions) {
    if (!s.supervised || !isStallKind(s.state)) continue;
    const stalledFor = now - s.state_since;
    if (stalledFor < threshold) continue;
    if ((cooldownUntil.get(cooldownKey(s.id, s.state)) ?? -Infinity) > now) continue;
    stalls.push({
      session_id: s.id,
      alias: s.alias,
      kind: s.state,
      stalled_for_s: Math.floor(stalledFor / 1000),
      cooldown_until: now + config.stall_cooldown_s * 1000,
    });
  }
  return stalls;
}

/** Drops the cooldowns that have run out, so sessions that stalled once are not remembered for ever. */
export function dropExpiredCooldowns(cooldownUntil: Map<string, number>, now: number): void {
  for (const [key, until] of cooldownUntil) if (until <= now) cooldownUntil.delete(key);
}

/** Scan ticks: the first after the startup delay, then every interval; none when the interval is 0 or less. */
export function watchdogTicks(config: WatchdogConfig, scheduler: SchedulerLike = asyncScheduler): Observable<number> {
  if (config.stall_watchdog_interval_s <= 0) return EMPTY;
  return timer(config.stall_watchdog_startup_delay_s * 1000, config.stall_watchdog_interval_s * 1000, scheduler);
}
