import { isPlainObject } from '../../profiles/merge-patch';
import type { LimitHit } from '../session-limit.model';

/**
 * How each runtime says its model's limit refused a turn, read into a LimitHit (docs/guide/usage.md#usage-limits).
 * Pure: the time a relative or clock-only reset is counted from comes in. Nothing here is compiled from worker text:
 * the patterns are ours, fixed.
 */

type Hit = Omit<LimitHit, 'prompt'>;

const epochMs = (seconds: unknown): number | null => (typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : null);
const limitType = (v: unknown): string | null => (typeof v === 'string' ? v.slice(0, 100) : null);

/**
 * claude's `result` of a refused turn: `api_error: "usage_limit_reached"` (a subscription's plan limit, with
 * `api_error_params.rate_limit_info`: its type and `resetsAt`, epoch seconds), or a 429 (`api_error_status`), whose reset
 * the turn's `rate_limit_event` may have said (`rejected`, given here as `lastRejected`). An API key's 429s claude retries
 * itself first; what reaches a result has outlasted them.
 */
export function claudeLimit(result: Record<string, unknown>, lastRejected: { resets_at: number | null; limit_type: string | null } | null): Hit | null {
  const usage = result.api_error === 'usage_limit_reached';
  if (!usage && result.api_error_status !== 429) return null;
  const params = isPlainObject(result.api_error_params) && isPlainObject(result.api_error_params.rate_limit_info) ? result.api_error_params.rate_limit_info : null;
  return {
    reason: usage ? 'usage_limit' : 'rate_limit',
    resets_at: epochMs(params?.resetsAt) ?? lastRejected?.resets_at ?? null,
    limit_type: limitType(params?.rateLimitType) ?? lastRejected?.limit_type ?? null,
  };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * codex's "try again at 4:05 PM" or "try again at Dec 4th, 2026 4:05 PM", in the local time of the machine (codex's own
 * and this one's): to the minute, so the reset is taken as that minute's end, never before it.
 */
export function codexRetryTime(message: string, now: Date): number | null {
  const m = /try again at (?:([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th), (\d{4}) )?(\d{1,2}):(\d{2}) (AM|PM)/i.exec(message);
  if (!m) return null;
  const hour12 = Number(m[4]);
  const minute = Number(m[5]);
  if (hour12 < 1 || hour12 > 12 || minute > 59) return null;
  const hour = (hour12 % 12) + (m[6].toUpperCase() === 'PM' ? 12 : 0);
  const day = m[1] === undefined ? now : new Date(Number(m[3]), MONTHS.indexOf(m[1]), Number(m[2]));
  if (m[1] !== undefined && (MONTHS.indexOf(m[1]) < 0 || Number.isNaN(day.getTime()))) return null;
  const at = new Date(day.getFullYear(), day.getMonth(), day.getDate(), hour, minute, 0, 0).getTime();
  return at + 60_000;
}

/**
 * codex's failed turn: "You've hit your usage limit … try again at …" (its plan's limit, a 429 it does not retry), or
 * "exceeded retry limit, last status: 429" (a throttle that outlasted its own retries, which honour retry-after).
 */
export function codexLimit(message: string, now: Date): Hit | null {
  if (/hit your usage limit/i.test(message)) return { reason: 'usage_limit', resets_at: codexRetryTime(message, now), limit_type: null };
  if (/last status: 429\b/.test(message) || /\b429 Too Many Requests\b/.test(message)) return { reason: 'rate_limit', resets_at: null, limit_type: null };
  return null;
}

/** A duration as Google's APIs write it: "1h2m3.5s", "45s", "250ms". */
function googleDuration(text: string): number | null {
  const m = /^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$/.exec(text);
  if (!m || text === '') return null;
  const [, h, min, s, ms] = m;
  return (Number(h ?? 0) * 3600 + Number(min ?? 0) * 60 + Number(s ?? 0)) * 1000 + Number(ms ?? 0);
}

/**
 * gemini's failed turn: the API's RESOURCE_EXHAUSTED (429), whose quota says when it resets ("reset after 1h2m3s",
 * "retry in 13.5s", or its RetryInfo's retryDelay) once gemini's own retries gave up.
 */
export function geminiLimit(message: string, now: number): Hit | null {
  if (!/RESOURCE_EXHAUSTED|\b429\b|quota/i.test(message)) return null;
  const delay = /(?:reset after|retry in|retryDelay"?:\s*"?)\s*([\d.hms]+)/i.exec(message)?.[1];
  const ms = delay === undefined ? null : googleDuration(delay.replace(/\.$/, ''));
  const usage = /quota|exhausted your capacity/i.test(message);
  return { reason: usage ? 'usage_limit' : 'rate_limit', resets_at: ms === null ? null : now + Math.ceil(ms), limit_type: null };
}

/** opencode's error event: its provider's APIError with `statusCode: 429`, and the response's retry-after when it had one. */
export function opencodeLimit(error: unknown, now: number): Hit | null {
  if (!isPlainObject(error) || !isPlainObject(error.data) || error.data.statusCode !== 429) return null;
  const headers = isPlainObject(error.data.responseHeaders) ? error.data.responseHeaders : {};
  const ms = Number(headers['retry-after-ms']);
  const s = Number(headers['retry-after']);
  const resets_at = Number.isFinite(ms) && ms > 0 ? now + ms : Number.isFinite(s) && s > 0 ? now + s * 1000 : null;
  return { reason: 'rate_limit', resets_at, limit_type: null };
}
