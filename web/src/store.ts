import { computed, effect, signal } from '@preact/signals';
import { ApiError, api, setToken, token } from './api';
import { StreamStatus, followStream } from './sse';
import type { DashboardSettings } from '../../src/dashboard/dashboard-settings';
import { attentionSince, needsAttention } from './attention-queue';
import { Autonomous, JournalEvent, Session } from './types';

export const sessions = signal<ReadonlyMap<string, Session>>(new Map());
/** The service's settings for the page (stall threshold, runtimes): loaded once at start. */
export const settings = signal<DashboardSettings | null>(null);
export const stallThresholdS = computed(() => settings.value?.stall_threshold_s ?? null);
export const autonomous = signal<Autonomous | null>(null);
export const streamStatus = signal<StreamStatus>('connecting');
/** Whether the sessions were loaded once: what came before that is not news. */
export const loaded = signal(false);
/** The clock the ages are shown against, ticking once a second. */
export const now = signal(Date.now());

/** ISO times in order by their characters: localeCompare collates, and costs milliseconds over a thousand sessions. */
export const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Bumped when a loop's cooldown ends: only then does the passing time change who needs attention. */
const loopsEnded = signal(0);

/**
 * Sessions waiting on someone (pending, held, or going round in circles), oldest wait first. Computed again when the
 * sessions change or a loop's cooldown ends (watchLoopEnds), not on every tick of the clock: with a thousand sessions a
 * pass costs milliseconds, and each new list renders the whole queue again.
 */
export const attention = computed(() => {
  void loopsEnded.value;
  const at = Date.now();
  const items: Array<{ s: Session; since: string }> = [];
  for (const s of sessions.value.values()) if (needsAttention(s, at)) items.push({ s, since: attentionSince(s, at) });
  return items.sort((a, b) => byText(a.since, b.since)).map(({ s }) => s);
});

/** A session parked at its model's limit (docs/guide/usage.md#usage-limits). */
type ParkedSession = Session & { parked: NonNullable<Session['parked']> };

/**
 * Sessions parked at their model's limit, soonest resume first and those kept parked last: apart from the attention
 * queue, since each resumes by itself (a parked session that also waits on someone is in the queue as well).
 */
export const parked = computed(() =>
  [...sessions.value.values()]
    .filter((s): s is ParkedSession => s.parked !== null)
    .sort((a, b) => (a.parked.resumes_at === null ? 1 : 0) - (b.parked.resumes_at === null ? 1 : 0) || byText(a.parked.resumes_at ?? '', b.parked.resumes_at ?? '')),
);

/** Sets a timer for the earliest loop cooldown still running, and again whenever the sessions change. */
function watchLoopEnds(): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = effect(() => {
    void loopsEnded.value;
    const at = Date.now();
    let next = Infinity;
    for (const s of sessions.value.values()) {
      const until = s.loop === null ? NaN : Date.parse(s.loop.until);
      if (until > at && until < next) next = until;
    }
    clearTimeout(timer);
    // setTimeout holds at most 2^31 - 1 ms: a longer cooldown is looked at again then.
    if (next !== Infinity) timer = setTimeout(() => loopsEnded.value++, Math.min(next - at + 1, 2 ** 31 - 1));
  });
  return () => {
    clearTimeout(timer);
    stop();
  };
}

/** Keeps the newer of two views of a session: a slow refetch must not undo what a later answer showed. */
export function putFresh(session: Session): void {
  putAll([session]);
}

function putAll(fetched: Iterable<Session>): void {
  let next: Map<string, Session> | null = null;
  for (const session of fetched) {
    const known = (next ?? sessions.value).get(session.id);
    if (known && known.updated_at > session.updated_at) continue;
    next ??= new Map(sessions.value);
    next.set(session.id, session);
  }
  if (next !== null) sessions.value = next;
}

/**
 * Refetched sessions are put together, at most every BATCH_MS: at a hundred events a second each one put alone computed
 * the lists of a thousand sessions and rendered the view again, a hundred times a second.
 */
const BATCH_MS = 50;
const arrived = new Map<string, Session>();
let batch: ReturnType<typeof setTimeout> | undefined;
function putSoon(session: Session): void {
  const before = arrived.get(session.id);
  if (!before || before.updated_at <= session.updated_at) arrived.set(session.id, session);
  batch ??= setTimeout(() => {
    batch = undefined;
    const fetched = [...arrived.values()];
    arrived.clear();
    putAll(fetched);
  }, BATCH_MS);
}

function dropSession(id: string): void {
  arrived.delete(id);
  if (!sessions.value.has(id)) return;
  const next = new Map(sessions.value);
  next.delete(id);
  sessions.value = next;
}

async function loadSessions(): Promise<void> {
  const all = new Map<string, Session>();
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page: { sessions: Session[]; next_cursor: string | null } = await api(`/coding-sessions?limit=1000${query}`);
    for (const s of page.sessions) all.set(s.id, s);
    cursor = page.next_cursor;
  } while (cursor !== null);
  // Rendered in a task of its own: parsing a thousand sessions and rendering them in one task made it a long one.
  await new Promise((resolve) => setTimeout(resolve, 0));
  sessions.value = all;
  loaded.value = true;
}

export async function refreshSession(id: string): Promise<void> {
  try {
    putSoon(await api<Session>(`/coding-sessions/${encodeURIComponent(id)}`));
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) dropSession(id);
    else throw e;
  }
}

export async function loadAutonomous(): Promise<void> {
  autonomous.value = (await api<{ autonomous: Autonomous | null }>('/session-os/main-brain/autonomous')).autonomous;
}

/** A burst of events about one thing costs one refetch: the last event of the burst starts it. */
const pending = new Map<string, ReturnType<typeof setTimeout>>();
function debounced(key: string, load: () => Promise<void>): void {
  clearTimeout(pending.get(key));
  pending.set(
    key,
    setTimeout(() => {
      pending.delete(key);
      load().catch(report);
    }, 100),
  );
}

/** Bumped when usage is journaled (a worker's or the brain's turn): the usage view loads its totals again. */
export const usageTick = signal(0);

export const lastError = signal<string | null>(null);
export const report = (e: unknown): void => {
  lastError.value = e instanceof Error ? e.message : String(e);
};

/** What an event names is fetched again: its session, or the supervision state. */
function onEvent(event: JournalEvent): void {
  if (event.type === 'session.usage' || event.type === 'brain.usage') debounced('usage', async () => void usageTick.value++);
  if (event.stream.startsWith('session-')) {
    const id = event.stream.slice('session-'.length);
    debounced(event.stream, () => refreshSession(id));
    // What waits unseen by the brain (autonomous.pending) moves with the sessions too.
    if (autonomous.value !== null) debounced('supervision', loadAutonomous);
  } else if (event.stream === 'supervision') {
    debounced('supervision', loadAutonomous);
  }
}

/** Loads what the page shows and follows the journal's events; returns a function that stops following. */
export function start(): () => void {
  const tick = setInterval(() => (now.value = Date.now()), 1000);
  const stopLoopWatch = watchLoopEnds();
  api<DashboardSettings>('/dashboard/settings').then((s) => (settings.value = s), report);
  const stop = followStream('/api/v1/events/stream', {
    token: () => token.value,
    onStatus: (status) => {
      streamStatus.value = status;
      if (status === 'unauthorized') setToken(null);
    },
    // The stream opens at the head: what came before is loaded once it is open, so nothing falls between the two.
    // A resumed stream replays what it missed, so nothing needs loading again.
    onOpen: (resumed) => {
      if (!resumed) Promise.all([loadSessions(), loadAutonomous()]).catch(report);
    },
    onMessage: (message) => {
      if (message.data === '') return;
      onEvent(JSON.parse(message.data) as JournalEvent);
    },
  });
  return () => {
    clearInterval(tick);
    stopLoopWatch();
    stop();
  };
}
