import { ProfileScope } from './profile.schema';

/** The profiles' events on the bus. */
export interface ProfileEventMap {
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

declare module '../bus/domain-event' {
  interface DomainEventMap extends ProfileEventMap {}
}
