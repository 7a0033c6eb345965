import { ProfileDoc, ProfileScope } from './profile.schema';
import { ProfileMetadata } from './profiles-state';

/** The profiles' events on the bus. */
export interface ProfileEventMap {
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
   * over the size limit, not a regular file), and why it is no valid profile (null when it is one). `at` is the file's
   * mtime. `meta`: what the directory's state file kept of a profile the journal did not know (a directory brought to
   * another journal), so it keeps its creation time, source and scope. The document is the text parsed, so it is not
   * carried: `doc` is there only in edits journaled before, and nothing reads it (the fold parses the text).
   */
  'profile.edited_on_disk': { id: string; text: string | null; error: string | null; at: string; meta?: ProfileMetadata; doc?: ProfileDoc | null };
  'profile.project_bound': { project_dir: string; profile_id: string | null };
  /**
   * On stream `profiles`: the profiles whose streams (`profile-<id>`) begin, journaled with their first event, so a
   * node finds every profile stream by reading this one.
   */
  'profile.registered': { ids: string[] };
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
