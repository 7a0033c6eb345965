import { JournalEvent } from '../journal/journal.port';
import { BrainEventMap } from '../main-brain/agent/brain-conversation';
import { ChatEventMap } from '../main-brain/chat.service';
import { ConfirmationEventMap } from '../main-brain/confirmation.decider';
import { ProfileScope } from '../profiles/profile.schema';
import { SessionEventMap } from '../sessions/session.events';
import { SupervisionEventMap } from '../supervision/supervision.events';
import { WorkflowEventMap } from '../workflows/workflow.events';

/**
 * Every event type the service journals and publishes, with its data. Each domain adds its entries here,
 * so the union stays one place to read. Consumers match on `type` (replayed events are plain objects).
 */
export interface DomainEventMap extends SupervisionEventMap, ChatEventMap, SessionEventMap, WorkflowEventMap, ConfirmationEventMap, BrainEventMap {
  'plugin.loaded': { name: string; path: string };
  'plugin.failed': { name: string; path: string; error: string };
  'profile.created': { id: string; name: string; source: 'user'; scope?: ProfileScope; at?: string };
  /** `scope` is there when the update set it. */
  'profile.updated': { id: string; fields: string[]; scope?: ProfileScope; at?: string };
  'profile.deleted': { id: string };
  'profile.duplicated': { id: string; from: string; name: string; scope?: ProfileScope; at?: string };
  'profile.default_set': { id: string; previous: string };
  'profile.imported': { id: string; name: string; warnings: string[]; at?: string };
  'profile.project_bound': { project_dir: string; profile_id: string | null };
  'profile.applied': {
    id: string;
    trigger: 'api' | 'auto_apply';
    dir: string;
    runtime: string;
    ok: boolean;
    files: Array<{ path: string; action: string }>;
    error: string | null;
  };
}

export type DomainEventType = keyof DomainEventMap;

export type DomainEvent = { [K in DomainEventType]: JournalEvent<K, DomainEventMap[K]> }[DomainEventType];

export type DomainEventOf<K extends DomainEventType> = Extract<DomainEvent, { type: K }>;

export interface NewDomainEvent<K extends DomainEventType = DomainEventType> {
  type: K;
  data: DomainEventMap[K];
  meta?: { actor?: string; correlation_id?: string | null; causation_seq?: number | null };
}
