import type { ProfileItem as ListedProfile } from '../../src/profiles/profile-views';
import { JsonObject } from './types';

/** The profile shapes the page reads, imported from the service (types only). */
export type { LintFinding, LintResult } from '../../src/profiles/profile.lint';
export type { PreviewResult as Preview } from '../../src/profiles/apply/profile-applier';
export type { ProjectBinding as Binding } from '../../src/profiles/profile-views';
/** A profile as GET /agent-profiles lists it, read as a JSON object too (a draft is made of its document's keys). */
export type ProfileItem = ListedProfile & JsonObject;

/** What the service adds to a profile beside its document: left out of a draft, which is the document alone. */
const NOT_DOCUMENT = ['id', 'created_at', 'updated_at', 'source', 'locked', 'owner_pack_id', 'scope', 'is_default', 'error', 'warnings'];

export function documentOf(profile: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(profile).filter(([key]) => !NOT_DOCUMENT.includes(key)));
}

/** The value at a dotted path of a draft, or undefined. */
export function valueAt(doc: JsonObject, path: readonly string[]): unknown {
  let at: unknown = doc;
  for (const key of path) at = typeof at === 'object' && at !== null && !Array.isArray(at) ? (at as JsonObject)[key] : undefined;
  return at;
}

/** A copy of the draft with the value at a path set; undefined removes the key. */
export function withValue(doc: JsonObject, path: readonly string[], value: unknown): JsonObject {
  const [key, ...rest] = path;
  const out: JsonObject = { ...doc };
  const inner = out[key];
  const next = rest.length === 0 ? value : withValue(typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? (inner as JsonObject) : {}, rest, value);
  if (next === undefined) delete out[key];
  else out[key] = next;
  return out;
}

/** A list edited one item a line: blank lines dropped. */
export const listOf = (text: string): string[] =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');

export const textOf = (value: unknown): string => (Array.isArray(value) ? value.map(String).join('\n') : '');

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * The JSON merge patch (the service's PATCH) that turns the saved document into the draft: changed keys, objects
 * recursively, and null for each key the draft took out (an MCP server, a hook event), which the service removes.
 */
export function mergePatchOf(saved: JsonObject, draft: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const [key, value] of Object.entries(draft)) {
    const before = saved[key];
    if (same(before, value)) continue;
    patch[key] = isObject(before) && isObject(value) ? mergePatchOf(before, value) : value;
  }
  for (const key of Object.keys(saved)) if (!(key in draft)) patch[key] = null;
  return patch;
}

/** The YAML file names the runtime `runtime`; the API and so the draft, `target_runtime`. */
export function yamlDocumentOf(draft: JsonObject): JsonObject {
  const { target_runtime, ...rest } = draft;
  return target_runtime === undefined ? rest : { name: rest.name, runtime: target_runtime, ...rest };
}

export function draftOfYamlDocument(doc: unknown): { ok: true; draft: JsonObject } | { ok: false; error: string } {
  if (!isObject(doc)) return { ok: false, error: 'the document must be a mapping (key: value lines)' };
  const { runtime, ...rest } = doc;
  return { ok: true, draft: runtime === undefined ? rest : { ...rest, target_runtime: runtime } };
}

/** Environment variables edited one `KEY=VALUE` a line: blank lines dropped, a line without `=` is a key with an empty value. */
export function envOf(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const at = line.indexOf('=');
    env[(at < 0 ? line : line.slice(0, at)).trim()] = at < 0 ? '' : line.slice(at + 1);
  }
  return env;
}

export const envText = (value: unknown): string =>
  isObject(value)
    ? Object.entries(value)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join('\n')
    : '';

/** A copy of a mapping with the key at position `index` renamed, the order kept (an MCP server's name is its key). */
export function renamedAt(record: JsonObject, index: number, name: string): JsonObject {
  return Object.fromEntries(Object.entries(record).map(([key, value], i) => [i === index ? name : key, value]));
}

/** A name not yet a key of the mapping: `base`, then `base-2`, `base-3`, … */
export function freshKey(record: JsonObject, base: string): string {
  if (!(base in record)) return base;
  let n = 2;
  while (`${base}-${n}` in record) n += 1;
  return `${base}-${n}`;
}

/** The value at a key of a plain object, or undefined; null (the schema's "none") reads as absent. */
export const fieldOf = (value: unknown, key: string): unknown => (isObject(value) && value[key] !== null ? value[key] : undefined);
