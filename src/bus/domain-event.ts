import { JournalEvent } from '../journal/journal.port';

/**
 * Every event type the service journals and publishes, with its data. The bus knows only its own (plugin.*): each
 * feature registers its events by declaration merging, next to where it defines them, so this layer imports no feature:
 *
 *     declare module '../bus/domain-event' {
 *       interface DomainEventMap extends SessionEventMap {}
 *     }
 *
 * Consumers match on `type` (replayed events are plain objects).
 */
export interface DomainEventMap {
  'plugin.loaded': { name: string; path: string };
  'plugin.failed': { name: string; path: string; error: string };
}

export type DomainEventType = keyof DomainEventMap;

export type DomainEvent = { [K in DomainEventType]: JournalEvent<K, DomainEventMap[K]> }[DomainEventType];

export type DomainEventOf<K extends DomainEventType> = Extract<DomainEvent, { type: K }>;

export interface NewDomainEvent<K extends DomainEventType = DomainEventType> {
  type: K;
  data: DomainEventMap[K];
  meta?: { actor?: string; correlation_id?: string | null; causation_seq?: number | null };
}
