import { NEEDS_ATTENTION, Session } from './types';

/**
 * Whether a session needs someone at `now` (epoch ms): it waits in a pending state, it is held (only the user releases
 * it), or a loop was detected in it and its cooldown has not ended (the loop may still be going on, working or not).
 */
export function needsAttention(s: Session, now: number): boolean {
  if (s.state === 'exited') return false;
  return NEEDS_ATTENTION.includes(s.state) || s.held !== null || (s.loop !== null && Date.parse(s.loop.until) > now);
}

/** Since when it has needed someone: the earliest of its pending state, its hold and its current loop. */
export function attentionSince(s: Session, now: number): string {
  const since = [
    ...(NEEDS_ATTENTION.includes(s.state) ? [s.state_since] : []),
    ...(s.held ? [s.held.since] : []),
    ...(s.loop && Date.parse(s.loop.until) > now ? [s.loop.detected_at] : []),
  ];
  return since.sort()[0] ?? s.state_since;
}
