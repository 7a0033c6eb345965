import { Controller, Get, Headers, Inject, Query, Sse } from '@nestjs/common';
import { Observable } from 'rxjs';
import { EventsPage, SseMessage, matching, queryEvents, sseEvents } from './audit';
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
    return sseEvents(this.journal, { lastEventId, afterSeq: q.after_seq }, matching(q));
  }
}
