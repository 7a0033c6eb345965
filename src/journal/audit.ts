import { Observable, concat, defer, filter, map, of } from 'rxjs';
import { DomainError } from '../common/domain-error';
import { JournalEvent, JournalReader } from './journal.port';

export interface EventsQuery {
  after_seq?: number;
  stream?: string;
  type?: string;
  limit?: number;
}

export interface EventsPage {
  events: JournalEvent[];
  /** Pass as after_seq to continue; null when the page reached the head. */
  next_after_seq: number | null;
  head_seq: number;
}

const SCAN_PAGE = 1000;
/** Bound on events scanned per request, so a filter that matches rarely cannot make one request read the world. */
const SCAN_BUDGET = 50_000;

/** Pages through the journal with optional stream/type filters. */
export async function queryEvents(journal: JournalReader, q: EventsQuery): Promise<EventsPage> {
  const limit = q.limit ?? 100;
  const head = journal.head().seq;
  const matches = matching(q);
  const events: JournalEvent[] = [];
  let cursor = q.after_seq ?? 0;
  let scanned = 0;
  while (events.length < limit && cursor < head && scanned < SCAN_BUDGET) {
    const page = await journal.readAll(cursor, SCAN_PAGE);
    if (page.length === 0) break;
    for (const e of page) {
      cursor = e.seq;
      scanned++;
      if (matches(e)) {
        events.push(e);
        if (events.length === limit) break;
      }
    }
  }
  return { events, next_after_seq: cursor < head ? cursor : null, head_seq: head };
}

/** An SSE message: a journaled event, or (no data) the seq a stream started at, so that a reconnect resumes there. */
export interface SseMessage {
  id: string;
  type?: string;
  data?: JournalEvent;
  comment?: string;
}

/** Where an SSE client asked to start: Last-Event-ID (a reconnecting EventSource) wins over ?after_seq. */
export interface SseResume {
  lastEventId?: string;
  afterSeq?: number;
}

/**
 * The journal's events that `keep` as SSE (`id` is the seq), after the client's cursor, then live. Without a cursor the
 * stream starts at the head: live events only, since replaying (and so re-verifying) the whole history for every client
 * that connects is not what a listener wants; history is paged with GET /journal/events or asked for with after_seq=0.
 * Such a stream opens with a message holding only the head's seq as its id, so an EventSource that reconnects before
 * any event came resumes there, without a gap.
 */
export function sseEvents(journal: JournalReader, resume: SseResume, keep: (e: JournalEvent) => boolean, shape: (e: JournalEvent) => JournalEvent = (e) => e): Observable<SseMessage> {
  const after = resumePoint(resume.lastEventId, resume.afterSeq);
  return defer(() => {
    const from = after ?? journal.head().seq;
    const events = journal.subscribe(from).pipe(
      filter(keep),
      map((e): SseMessage => ({ id: String(e.seq), type: e.type, data: shape(e) })),
    );
    return after === null ? concat(of<SseMessage>({ id: String(from), comment: 'live events after this seq' }), events) : events;
  });
}

/** The filter of GET /events/stream and /journal/events. */
export function matching(q: { stream?: string; type?: string }): (e: JournalEvent) => boolean {
  return (e) => (!q.stream || e.stream === q.stream) && (!q.type || e.type === q.type);
}

/** The client's cursor, or null when it gave none (the stream starts at the head). */
function resumePoint(lastEventId: string | undefined, afterSeq: number | undefined): number | null {
  if (lastEventId === undefined || lastEventId === '') return afterSeq ?? null;
  if (!/^\d{1,15}$/.test(lastEventId)) throw new DomainError('invalid_input', 'Last-Event-ID: must be a non-negative integer seq');
  return Number(lastEventId);
}
