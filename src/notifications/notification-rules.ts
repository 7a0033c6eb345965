import { NotificationKind } from '../config/notify-config';
import { Signal, WaitingItem } from './notification-triggers';

/**
 * When to notify, in virtual time: pure, with the time, the minute of the day and whether the brain handles a thing as
 * inputs. The rules:
 * - only the kinds chosen notify;
 * - what the main brain handles (a supervised session's permission, block, stall, loop or budget while supervision is
 *   on) does not, unless it asks the person (its questions, its gate's confirmations, a worker's ask_human);
 * - a merge window per session (the brain's own things share one key, and so do sessions parked at their model's limit,
 *   notified once per episode): the first thing notifies at once, what follows
 *   within the window is sent once at its end as one notification, updated, under the same key;
 * - when more sessions than `digest_after` have something waiting, one digest goes instead;
 * - quiet hours send nothing; when they end, one notification (a digest if several wait) says what still waits.
 * Rate limits and retries are the channels' (channel-outbox.ts).
 */

export interface RuleSettings {
  kinds: ReadonlySet<NotificationKind>;
  /** Minutes of the day [from, to), wrapping past midnight; null: none. */
  quiet: { from: number; to: number } | null;
  merge_window_ms: number;
  digest_after: number;
}

/** What the brain handles itself when supervision is on and the session is supervised. */
export const BRAIN_HANDLED: ReadonlySet<NotificationKind> = new Set<NotificationKind>(['permission', 'blocked', 'stall', 'loop', 'budget']);

export const DIGEST_KEY = 'digest';
/** The key of what is not any session's: the brain's questions and its gate's confirmations. */
export const MAIN_BRAIN_KEY = 'main-brain';
/** Things remembered as waiting at most; the oldest are forgotten past it (they were notified already). */
export const MAX_WAITING = 1000;

export interface Window {
  sent_at: number;
  /** Something changed since it was sent: it is sent again, updated, when the window ends. */
  dirty: boolean;
}

export interface NotifierState {
  waiting: ReadonlyMap<string, WaitingItem>;
  windows: ReadonlyMap<string, Window>;
  /** Something arrived during quiet hours. */
  held: boolean;
}

/** One notification to send (or to send again, updated: same key). */
export interface Notice {
  key: string;
  digest: boolean;
  /** What waits under this key, oldest first; for a digest, everything waiting. */
  items: WaitingItem[];
  at: number;
}

export interface Clock {
  now: number;
  /** The service's local minute of the day at `now` (0..1439). */
  minute: number;
}

export const emptyNotifierState = (): NotifierState => ({ waiting: new Map(), windows: new Map(), held: false });

/** The key of sessions parked at their model's limit: one notice for them all ("5 workers paused until 04:10"). */
export const LIMIT_KEY = 'limit';

export const keyOf = (item: WaitingItem): string => (item.kind === 'limit' ? LIMIT_KEY : (item.session_id ?? MAIN_BRAIN_KEY));

export function isQuiet(settings: RuleSettings, minute: number): boolean {
  const q = settings.quiet;
  if (!q) return false;
  return q.from < q.to ? minute >= q.from && minute < q.to : minute >= q.from || minute < q.to;
}

interface Step {
  state: NotifierState;
  notices: Notice[];
}

/** One signal: a thing starts or stops waiting. `handledByBrain` says whether the brain deals with a `wait`'s session. */
export function onSignal(state: NotifierState, signal: Signal, clock: Clock, settings: RuleSettings, handledByBrain: boolean): Step {
  if (signal.type !== 'wait') return { state: { ...state, waiting: settle(state.waiting, signal) }, notices: [] };
  const item = signal.item;
  if (!settings.kinds.has(item.kind) || (handledByBrain && BRAIN_HANDLED.has(item.kind))) return { state, notices: [] };
  // A session parked again in the same episode (a resume refused) was notified already: its item is only updated.
  const again = item.kind === 'limit' && state.waiting.has(item.item);
  const waiting = new Map(state.waiting);
  waiting.delete(item.item);
  waiting.set(item.item, item);
  while (waiting.size > MAX_WAITING) waiting.delete(waiting.keys().next().value as string);
  const next: NotifierState = { ...state, waiting };
  if (again) return { state: next, notices: [] };
  if (isQuiet(settings, clock.minute)) return { state: { ...next, held: true }, notices: [] };
  return send(next, keyOf(item), clock.now, settings);
}

/** Time passes: windows that ended send what changed in them, and the end of quiet hours says what still waits. */
export function onTick(state: NotifierState, clock: Clock, settings: RuleSettings): Step {
  if (isQuiet(settings, clock.minute)) return { state, notices: [] };
  if (state.held) {
    const keys = waitingKeys(state);
    const after = { ...state, held: false, windows: new Map<string, Window>() };
    if (keys.length === 0) return { state: after, notices: [] };
    if (keys.length === 1) return send(after, keys[0], clock.now, settings);
    return digest(after, clock.now, settings, true);
  }
  let current = state;
  const notices: Notice[] = [];
  for (const [key, w] of state.windows) {
    if (!w.dirty || clock.now < w.sent_at + settings.merge_window_ms) continue;
    const windows = new Map(current.windows);
    windows.set(key, { ...w, dirty: false });
    current = { ...current, windows };
    const stillWaits = key === DIGEST_KEY ? current.waiting.size > 0 : itemsOf(current, key).length > 0;
    if (!stillWaits) continue;
    const step = key === DIGEST_KEY ? digest(current, clock.now, settings, true) : send(current, key, clock.now, settings);
    current = step.state;
    notices.push(...step.notices);
  }
  return { state: current, notices };
}

/** When onTick has something to do next, or null. */
export function nextWake(state: NotifierState, clock: Clock, settings: RuleSettings): number | null {
  if (state.held) {
    const q = settings.quiet;
    if (!q || !isQuiet(settings, clock.minute)) return clock.now;
    const minutes = (q.to - clock.minute + 1440) % 1440 || 1440;
    return clock.now + minutes * 60_000;
  }
  let at: number | null = null;
  for (const w of state.windows.values()) if (w.dirty) at = Math.min(at ?? Infinity, w.sent_at + settings.merge_window_ms);
  return at;
}

function settle(waiting: ReadonlyMap<string, WaitingItem>, signal: Exclude<Signal, { type: 'wait' }>): ReadonlyMap<string, WaitingItem> {
  const gone = (w: WaitingItem): boolean => {
    if (signal.type === 'settle') return w.item === signal.item;
    if (signal.type === 'settle_kind') return w.kind === signal.kind;
    // A parked session works on (state working) while it waits for its reset.
    return w.session_id === signal.session_id && (signal.permissions || (w.kind !== 'permission' && w.kind !== 'limit'));
  };
  const kept = [...waiting.values()].filter((w) => !gone(w));
  return kept.length === waiting.size ? waiting : new Map(kept.map((w) => [w.item, w]));
}

const itemsOf = (state: NotifierState, key: string): WaitingItem[] => [...state.waiting.values()].filter((w) => keyOf(w) === key);

function waitingKeys(state: NotifierState): string[] {
  return [...new Set([...state.waiting.values()].map(keyOf))];
}

/** Sends the key's notification now, or marks it for its window's end; a digest instead when many sessions wait. */
function send(state: NotifierState, key: string, now: number, settings: RuleSettings): Step {
  if (waitingKeys(state).length > settings.digest_after) return digest(state, now, settings, false);
  return throttled(state, key, now, settings, () => ({ key, digest: false, items: itemsOf(state, key), at: now }));
}

/** The digest covers everything waiting: once it is sent, no session's window has anything left to send. */
function digest(state: NotifierState, now: number, settings: RuleSettings, force: boolean): Step {
  const notice = (): Notice => ({ key: DIGEST_KEY, digest: true, items: [...state.waiting.values()], at: now });
  const step = force
    ? { state: { ...state, windows: new Map(state.windows).set(DIGEST_KEY, { sent_at: now, dirty: false }) }, notices: [notice()] }
    : throttled(state, DIGEST_KEY, now, settings, notice);
  if (step.notices.length === 0) return step;
  const windows = new Map([...step.state.windows].map(([k, w]) => [k, { ...w, dirty: false }]));
  return { state: { ...step.state, windows }, notices: step.notices };
}

function throttled(state: NotifierState, key: string, now: number, settings: RuleSettings, notice: () => Notice): Step {
  const w = state.windows.get(key);
  const windows = new Map(state.windows);
  if (w && now < w.sent_at + settings.merge_window_ms) {
    windows.set(key, { ...w, dirty: true });
    return { state: { ...state, windows }, notices: [] };
  }
  // Windows long over are forgotten, so the map holds only the keys that notified recently.
  for (const [k, old] of windows) if (!old.dirty && now >= old.sent_at + settings.merge_window_ms) windows.delete(k);
  windows.set(key, { sent_at: now, dirty: false });
  return { state: { ...state, windows }, notices: [notice()] };
}
