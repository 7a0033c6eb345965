import { Observable, filter, map } from 'rxjs';
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
  const matches = (e: JournalEvent) => (!q.stream || e.stream === q.stream) && (!q.type || e.type === q.type);
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

export interface SseMessage {
  id: string;
  type: string;
  data: JournalEvent;
}

/** The live event stream for SSE: catch-up from after_seq, then live; `id` is the seq so clients resume with Last-Event-ID. */
export function eventStream(journal: JournalReader, afterSeq: number, q: { stream?: string; type?: string } = {}): Observable<SseMessage> {
  return journal.subscribe(afterSeq).pipe(
    filter((e) => (!q.stream || e.stream === q.stream) && (!q.type || e.type === q.type)),
    map((e) => ({ id: String(e.seq), type: e.type, data: e })),
  );
}

/** Where an SSE client resumes: Last-Event-ID (a reconnecting EventSource) wins over ?after_seq. */
export function resumePoint(lastEventId: string | undefined, afterSeq: number | undefined): number {
  if (lastEventId === undefined || lastEventId === '') return afterSeq ?? 0;
  if (!/^\d{1,15}$/.test(lastEventId)) throw new DomainError('invalid_input', 'Last-Event-ID: must be a non-negative integer seq');
  return Number(lastEventId);
}
