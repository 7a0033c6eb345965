/**
 * One channel's outbox, pure and in virtual time: a rate limit per channel, retries with backoff, and what is shown
 * of a failing channel. It holds the latest notification per key (an update replaces one not yet sent), so a channel
 * that fails or is rate-limited sends, once it can, what is true then, not a backlog.
 */

export interface Outgoing {
  key: string;
}

export interface OutboxState<N extends Outgoing> {
  /** Oldest first, one per key. */
  queue: readonly N[];
  /** Send times within the last minute. */
  sent: readonly number[];
  /** Failures in a row; 0 once a send succeeds. */
  failures: number;
  retry_at: number | null;
  last_error: string | null;
  last_sent_at: number | null;
  sending: boolean;
}

export const RETRY_BASE_MS = 5_000;
export const RETRY_MAX_MS = 10 * 60_000;
/** Keys waiting at most; the oldest is dropped past it. */
export const MAX_QUEUED = 50;
const MINUTE = 60_000;

export const emptyOutbox = <N extends Outgoing>(): OutboxState<N> => ({ queue: [], sent: [], failures: 0, retry_at: null, last_error: null, last_sent_at: null, sending: false });

export function enqueue<N extends Outgoing>(s: OutboxState<N>, notice: N): OutboxState<N> {
  const queue = [...s.queue.filter((q) => q.key !== notice.key), notice];
  return { ...s, queue: queue.slice(Math.max(0, queue.length - MAX_QUEUED)) };
}

export type Take<N extends Outgoing> = { state: OutboxState<N>; send: N } | { state: OutboxState<N>; wake_at: number | null };

/** The next notification to send now, or when to look again (null: nothing to send). */
export function take<N extends Outgoing>(s: OutboxState<N>, now: number, perMinute: number): Take<N> {
  const sent = s.sent.filter((t) => now - t < MINUTE);
  const state = { ...s, sent };
  if (s.sending || s.queue.length === 0) return { state, wake_at: null };
  if (s.retry_at !== null && now < s.retry_at) return { state, wake_at: s.retry_at };
  if (sent.length >= perMinute) return { state, wake_at: sent[0] + MINUTE };
  const [send, ...queue] = s.queue;
  return { state: { ...state, queue, sent: [...sent, now], sending: true }, send };
}

export function backoffMs(failures: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, failures - 1));
}

/**
 * How the send ended. A failure that may pass is retried after a backoff that doubles, unless an update for the same
 * key came meanwhile (then the update goes); one that cannot pass (the device is gone) is dropped.
 */
export function settled<N extends Outgoing>(s: OutboxState<N>, notice: N, now: number, result: { ok: true } | { ok: false; error: string; retry: boolean }): OutboxState<N> {
  if (result.ok) return { ...s, sending: false, failures: 0, retry_at: null, last_error: null, last_sent_at: now };
  const failures = s.failures + 1;
  const queue = result.retry && !s.queue.some((q) => q.key === notice.key) ? [notice, ...s.queue] : s.queue;
  return { ...s, sending: false, failures, retry_at: now + backoffMs(failures), last_error: result.error, queue: queue.slice(0, MAX_QUEUED) };
}

export interface ChannelHealth {
  state: 'ok' | 'failing';
  failures: number;
  last_error: string | null;
  retry_at: string | null;
  last_sent_at: string | null;
  queued: number;
}

export function healthOf(s: OutboxState<Outgoing>): ChannelHealth {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return { state: s.failures > 0 ? 'failing' : 'ok', failures: s.failures, last_error: s.last_error, retry_at: iso(s.retry_at), last_sent_at: iso(s.last_sent_at), queued: s.queue.length };
}
