import { Controller, Get, Headers, Inject, Query, Sse } from '@nestjs/common';
import { Observable } from 'rxjs';
import { DomainError } from '../common/domain-error';
import { EventsPage, SseMessage, eventStream, queryEvents } from './audit';
import { EventsQueryDto, StreamQueryDto } from './journal.dto';
import { Journal, VerifyReport } from './journal.port';
import { JOURNAL } from './journal.tokens';

@Controller()
export class JournalController {
  constructor(@Inject(JOURNAL) private readonly journal: Journal) {}

  @Get('journal/events')
  events(@Query() q: EventsQueryDto): Promise<EventsPage> {
    return queryEvents(this.journal, q);
  }

  @Get('journal/verify')
  verify(): Promise<VerifyReport> {
    return this.journal.verify();
  }

  @Sse('events/stream')
  stream(@Query() q: StreamQueryDto, @Headers('last-event-id') lastEventId?: string): Observable<SseMessage> {
    return eventStream(this.journal, resumePoint(lastEventId, q.after_seq), q);
  }
}

/** Last-Event-ID (a reconnecting EventSource) wins over ?after_seq. */
function resumePoint(lastEventId: string | undefined, afterSeq: number | undefined): number {
  if (lastEventId === undefined || lastEventId === '') return afterSeq ?? 0;
  if (!/^\d{1,15}$/.test(lastEventId)) throw new DomainError('invalid_input', 'Last-Event-ID: must be a non-negative integer seq');
  return Number(lastEventId);
}
