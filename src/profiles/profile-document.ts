import { DomainError } from '../common/domain-error';
import { LintFinding } from './profile.lint';
import { METADATA_FIELDS, MetadataField, PROFILE_SCOPES, ProfileDoc, ProfileScope, ProfileSource, parseProfileDocument } from './profile.schema';
import { toPlain } from '../common/dto-plain';
import { dumpProfileYaml, parseProfileYaml } from './profile.yaml';
import { ProfileMetadata } from './profiles-state';
import { BUILTIN_PROFILES, BUILTIN_TEMPLATES_RELEASED_AT } from './templates';

/** A profile document and its file text, between the API, the journal and the disk. Pure. */

/** What a file's text makes: the document and the metadata keys it set (lint warns of them), or why it is no profile. */
export type ParsedFile = { doc: ProfileDoc; metadataKeys: MetadataField[] } | { error: string };

/** A create or update body, in API names. */
export type ProfileInput = Record<string, unknown>;

export const BUILTIN_DOCS: ReadonlyMap<string, ProfileDoc> = new Map(BUILTIN_PROFILES.map((t) => [t.id, t.doc]));

export const BUILTIN_META: ProfileMetadata = {
  created_at: BUILTIN_TEMPLATES_RELEASED_AT,
  updated_at: BUILTIN_TEMPLATES_RELEASED_AT,
  source: 'builtin',
  locked: true,
  owner_pack_id: null,
  scope: 'shared',
};

/** Static routes under /agent-profiles that a profile id must not shadow. */
export const ROUTE_IDS: readonly string[] = ['import', 'project-binding', 'lint'];

export function parseProfileText(text: string): ParsedFile {
  const yaml = parseProfileYaml(text);
  if (!yaml.ok) return { error: `invalid YAML: ${yaml.error}` };
  const parsed = parseProfileDocument(yaml.value);
  return parsed.ok ? { doc: parsed.doc, metadataKeys: parsed.metadataKeys } : { error: parsed.errors.join('; ') };
}

/**
 * The file text for a valid document, or why it cannot be saved: the YAML reader would not take it back (over 256 KiB,
 * nested too deep), and a profile that lists as malformed afterwards must not be saved. The schema was checked already.
 */
export function serialise(doc: ProfileDoc): { text: string } | { error: string } {
  const text = dumpProfileYaml(doc);
  const back = parseProfileYaml(text);
  return back.ok ? { text } : { error: `the profile cannot be saved: its file would not read back (${back.error})` };
}

/** A document that validates, or the refusal naming what is wrong. */
export function validated(raw: unknown): ProfileDoc {
  const parsed = parseProfileDocument(raw);
  if (!parsed.ok) throw new DomainError('invalid_input', parsed.errors.join('; '), { errors: parsed.errors });
  return parsed.doc;
}

/** A schema message (`path: what is wrong`) as a lint finding on that path. */
export function schemaFinding(message: string): LintFinding {
  const at = message.indexOf(': ');
  return { path: at > 0 ? message.slice(0, at) : '', code: 'schema', message };
}

export function newMeta(at: string, source: ProfileSource, scope: ProfileScope): ProfileMetadata {
  return { created_at: at, updated_at: at, source, locked: false, owner_pack_id: null, scope };
}

/**
 * A body's `scope` (service metadata, not part of the document) apart from its document fields. Checked here as well
 * as by the DTO, since the main brain's tool passes bodies in without one.
 */
export function takeScope(input: ProfileInput): { scope?: ProfileScope; fields: ProfileInput } {
  const { scope, ...fields } = input;
  if (scope === undefined) return { fields };
  if (!PROFILE_SCOPES.includes(scope as ProfileScope)) throw new DomainError('invalid_input', `scope: must be one of the following values: ${PROFILE_SCOPES.join(', ')}`);
  return { scope: scope as ProfileScope, fields };
}

/** API names to YAML names: `target_runtime` is the document's `runtime`. */
export function fromApi(input: ProfileInput): Record<string, unknown> {
  const { target_runtime, ...rest } = toPlain(input) as Record<string, unknown>;
  return target_runtime === undefined ? rest : { ...rest, runtime: target_runtime };
}

/** Names compare without case and surrounding blanks. */
export function nameKey(name: string): string {
  return name.trim().toLowerCase();
}

export type ImportNoteCode = 'default_cwd_dropped' | 'auto_apply_dir_dropped' | 'metadata_ignored' | 'renamed';

/** What an import left out or changed, and why. */
export interface ImportNote {
  path: string;
  code: ImportNoteCode;
  message: string;
}

/** An exported file as a document to import, with what was left out of it and why. */
export function importable(text: string): { doc: ProfileDoc; notes: ImportNote[] } {
  const parsed = parseProfileYaml(text);
  if (!parsed.ok) throw new DomainError('invalid_input', `yaml: ${parsed.error}`);
  const raw = parsed.value;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new DomainError('invalid_input', 'yaml: must be a mapping');
  const notes: ImportNote[] = [];
  const fields: Record<string, unknown> = { ...raw };
  for (const key of METADATA_FIELDS) {
    if (key in fields) {
      delete fields[key];
      notes.push({ path: key, code: 'metadata_ignored', message: `${key} is managed by the service and was ignored` });
    }
  }
  // Both name directories of the machine the file came from; an auto_apply_dir kept would also have an imported
  // file write hooks (commands) into a project here before anyone looked at it.
  for (const key of ['default_cwd', 'auto_apply_dir'] as const) {
    if (typeof fields[key] === 'string' && fields[key] !== '') {
      notes.push({ path: key, code: `${key}_dropped`, message: `${key} is not imported; edit the profile to set one` });
    }
    delete fields[key];
  }
  return { doc: validated(fields), notes };
}
