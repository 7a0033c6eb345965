import { Observable, filter } from 'rxjs';
import { Journal } from '../journal/journal.port';
import { DomainEvent, DomainEventOf, DomainEventType } from './domain-event';

/**
 * The one event bus, the reading side of the journal. It publishes exactly what the journal committed, in seq order,
 * each event after its appender applied it: command → decide → append → apply → publish (the appends go through
 * handleCommand, src/journal/command-handler.ts). Nothing is published that was not durably appended first.
 */
export class EventBus {
  readonly events$: Observable<DomainEvent>;

  constructor(journal: Journal) {
    this.events$ = journal.committed$ as Observable<DomainEvent>;
  }

  ofType<K extends DomainEventType>(...types: K[]): Observable<DomainEventOf<K>> {
    const wanted = new Set<string>(types);
    return this.events$.pipe(filter((e): e is DomainEventOf<K> => wanted.has(e.type)));
  }
}
