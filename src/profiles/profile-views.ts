import { LintResult } from './profile.lint';
import { MetadataField, ProfileDoc, ProfileScope, Runtime } from './profile.schema';
import { BUILTIN_META, ImportNote, ParsedFile } from './profile-document';
import { ProfileMetadata } from './profiles-state';

/** What the service answers about profiles, and what callers hand it. Pure. */

/** What a save could not do although the profile was saved: an auto-apply that failed. */
export interface SaveWarning {
  path: 'auto_apply_dir';
  code: 'auto_apply_failed';
  message: string;
}

/** Called after a profile is saved (create, update); auto-apply listens here, and answers what it could not do. */
export type SavedListener = (id: string, doc: ProfileDoc) => Promise<SaveWarning[]>;

/** A profile as a save check sees it: the document and its scope. */
export interface ProfileSide {
  doc: ProfileDoc;
  scope: ProfileScope;
}

/**
 * Judges a save before anything is written, inside the queue the save runs in (so nothing changes the profile between
 * the check and the write): `before` is null for a new profile. It refuses by throwing.
 */
export type SaveCheck = (before: (ProfileSide & { id: string }) | null, after: ProfileSide) => void;

/** The document in API names (`target_runtime`), its metadata, and whether it is the default. */
export type ProfileView = { id: string } & Omit<ProfileDoc, 'runtime'> & { target_runtime: Runtime } & ProfileMetadata & {
    is_default: boolean;
    error: null;
  };

/** A file that does not parse or validate: listed with its error instead of breaking the listing. */
export type MalformedProfileView = { id: string; name: null } & ProfileMetadata & { is_default: boolean; error: string };

export type ProfileItem = ProfileView | MalformedProfileView;

/** The answer to a create or an update: the profile, and what the save could not do besides. */
export type SavedProfile = ProfileView & { warnings: SaveWarning[] };

export interface ProfileList {
  profiles: ProfileItem[];
  default_profile_id: string;
}

export type { ImportNoteCode } from './profile-document';

export interface ImportResult {
  profile: ProfileView;
  warnings: ImportNote[];
  lint: LintResult;
}

export interface ProjectBinding {
  project_dir: string;
  profile_id: string;
}

/** A profile as the service reads it: its document (or why it has none) and its metadata. */
export type Entry = ValidEntry | { id: string; error: string; meta: ProfileMetadata };
export type ValidEntry = { id: string; doc: ProfileDoc; metadataKeys: MetadataField[]; meta: ProfileMetadata };

export function entryOf(id: string, parsed: ParsedFile, meta: ProfileMetadata): Entry {
  return 'error' in parsed ? { id, error: parsed.error, meta } : { id, doc: parsed.doc, metadataKeys: parsed.metadataKeys, meta };
}

export function builtinEntry(id: string, doc: ProfileDoc): ValidEntry {
  return { id, doc, metadataKeys: [], meta: BUILTIN_META };
}

export function viewOf(entry: Entry, defaultId: string): ProfileItem {
  if ('error' in entry) return { id: entry.id, name: null, ...entry.meta, is_default: entry.id === defaultId, error: entry.error };
  return validView(entry, defaultId);
}

export function validView(entry: ValidEntry, defaultId: string): ProfileView {
  const { runtime, ...rest } = entry.doc;
  return { id: entry.id, ...rest, target_runtime: runtime, ...entry.meta, is_default: entry.id === defaultId, error: null };
}
