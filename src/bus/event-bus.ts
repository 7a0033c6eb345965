import { Observable, filter } from 'rxjs';
import { AppendOptions, AppendResult, Journal } from '../journal/journal.port';
import { DomainEvent, DomainEventOf, DomainEventType, NewDomainEvent } from './domain-event';

/**
 * The one event bus. It publishes exactly what the journal committed, in seq order, each event after its
 * emitter applied it: command → decide → append → apply → publish. Nothing is published that was not durably
 * appended first.
 */
export class EventBus {
  readonly events$: Observable<DomainEvent>;

  constructor(private readonly journal: Journal) {
    this.events$ = journal.committed$ as Observable<DomainEvent>;
  }

  /**
   * Appends to the journal, runs the emitter's apply step (options.apply: its state takes the events), then publishes;
   * resolves once the events are durable and applied.
   */
  emit(stream: string, events: readonly NewDomainEvent[], options?: AppendOptions): Promise<AppendResult> {
    return this.journal.append(stream, events, options);
  }

  ofType<K extends DomainEventType>(...types: K[]): Observable<DomainEventOf<K>> {
    const wanted = new Set<string>(types);
    return this.events$.pipe(filter((e): e is DomainEventOf<K> => wanted.has(e.type)));
  }
}
