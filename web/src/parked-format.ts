/** How a session parked at its model's limit reads on the page. Pure (the time is an input), so a spec can pin it. */
import { Session } from './types';

export type ParkedStatus = NonNullable<Session['parked']>;

const REASONS: Record<ParkedStatus['reason'], string> = { usage_limit: 'usage limit', rate_limit: 'rate limit' };
const SOURCES: Record<ParkedStatus['source'], string> = {
  runtime: 'The resume time is the reset the runtime named.',
  backoff: 'The runtime named no reset: it is tried again after a backoff.',
  user: 'It was kept parked: it waits for someone to resume it.',
  fallback: "It was kept parked: a session under its profile's fallback goes on with its work.",
};

/** HH:MM, local, 24-hour: toTimeString, not an Intl formatter, which costs a page milliseconds of locale data. */
export const clockOf = (iso: string): string => new Date(iso).toTimeString().slice(0, 5);

/** What is left of `ms`, rounded up: a countdown never says less than is left (3_540_001 ms → "1h", 90 s → "2m"). */
export function countdown(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.ceil(s / 60);
  if (m < 60) return `${m}m`;
  return m % 60 === 0 ? `${m / 60}h` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

/** The flag at `now` (epoch ms): "Parked (usage limit) · resumes in 42m (04:10)", or "· kept parked" with no resume time. */
export function parkedFlag(parked: ParkedStatus, now: number): string {
  const why = `Parked (${REASONS[parked.reason]})`;
  if (parked.resumes_at === null) return `${why} · kept parked`;
  const left = Date.parse(parked.resumes_at) - now;
  // Past its time it waits for its turn in the staggered resumes (or the service's next look): it is on its way.
  return left > 0 ? `${why} · resumes in ${countdown(left)} (${clockOf(parked.resumes_at)})` : `${why} · resuming now`;
}

/** The needs-attention view's line: nothing to do while it resumes by itself; kept parked, it waits for someone. */
export function parkedNote(parked: ParkedStatus): string {
  return parked.resumes_at === null ? 'kept parked until someone resumes it' : `resumes by itself at ${clockOf(parked.resumes_at)}`;
}

/** The detail's account of it: which limit refused it, since when, and where its resume time came from. */
export function parkedDetail(parked: ParkedStatus): string {
  const limit = parked.limit_type === null ? REASONS[parked.reason] : `${REASONS[parked.reason]} (${parked.limit_type})`;
  const attempt = parked.attempt > 1 ? `, refusal ${parked.attempt} in a row` : '';
  return `Its model refused a turn at its ${limit} at ${clockOf(parked.since)}${attempt}. ${SOURCES[parked.source]}`;
}
