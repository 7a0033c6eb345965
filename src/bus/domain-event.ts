import { JournalEvent } from '../journal/journal.port';
import { BrainEventMap } from '../main-brain/agent/brain-conversation';
import { ChatEventMap } from '../main-brain/chat.service';
import { ConfirmationEventMap } from '../main-brain/confirmation.decider';
import { ProfileDoc, ProfileScope } from '../profiles/profile.schema';
import { SessionEventMap } from '../sessions/session.events';
import { SupervisionEventMap } from '../supervision/supervision.events';
import { WorkflowEventMap } from '../workflows/workflows.service';

/**
 * Every event type the service journals and publishes, with its data. Each domain adds its entries here,
 * so the union stays one place to read. Consumers match on `type` (replayed events are plain objects).
 */
export interface DomainEventMap extends SupervisionEventMap, ChatEventMap, SessionEventMap, WorkflowEventMap, ConfirmationEventMap, BrainEventMap {
  'plugin.loaded': { name: string; path: string };
  'plugin.failed': { name: string; path: string; error: string };
  /**
   * `doc` is the whole document and `text` the file written from it (its key order, which the journal's canonical
   * JSON does not keep); both absent in events journaled before they were carried.
   */
  'profile.created': { id: string; name: string; source: 'user'; scope?: ProfileScope; at?: string; doc?: ProfileDoc; text?: string };
  /** `scope` is there when the update set it. */
  'profile.updated': { id: string; fields: string[]; scope?: ProfileScope; at?: string; doc?: ProfileDoc; text?: string };
  'profile.deleted': { id: string };
  'profile.duplicated': { id: string; from: string; name: string; scope?: ProfileScope; at?: string; doc?: ProfileDoc; text?: string };
  'profile.default_set': { id: string; previous: string };
  'profile.imported': { id: string; name: string; warnings: string[]; at?: string; doc?: ProfileDoc; text?: string };
  /**
   * A file that differs from what the journal says it holds, taken as it is: its text (null when it cannot be read:
   * over the size limit, not a regular file), its document when it parses, else the error. `at` is the file's mtime.
   */
  'profile.edited_on_disk': { id: string; text: string | null; doc: ProfileDoc | null; error: string | null; at: string };
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
