import { createHash } from 'node:crypto';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { DomainError } from '../../common/domain-error';
import { EMIT_RUNTIMES, EmitRuntime, EmittedFile, blockEnd, blockStart } from '../emitters';
import { isPlainObject, mergePatch } from '../merge-patch';

/**
 * What applying emitted files to a directory would do, file by file. Pure: the caller reads the existing
 * files and the manifest, and writes the result.
 */

export type FileAction = 'create' | 'update' | 'unchanged' | 'drift';

/** Why a file is `drift`: applying would lose something of the user's, so apply refuses it without force. */
export type DriftReason = 'edited_since_apply' | 'not_written_by_brainstem' | 'comments_would_be_lost';

/** A file the last apply wrote whole and this one no longer emits: `remove` when unchanged since, `kept` when edited. */
export type WithdrawnAction = 'remove' | 'kept';

export interface WithdrawnFile {
  path: string;
  /** The file as it would be after apply: empty when removed. */
  content: string;
  action: WithdrawnAction;
}

export interface PlannedFile {
  path: string;
  /** The file as it would be after apply: emitted content merged into what exists. */
  content: string;
  action: FileAction;
  /** Set exactly when action is drift. */
  reason?: DriftReason;
  /** For json/toml files: what the profile emitted, kept in the manifest so the next apply can withdraw it. */
  fragment?: string;
  /** Written whole (`owned` merge): a later apply that no longer emits it removes it. */
  whole?: true;
}

/** `.brainstem/applied-<profile-id>.<runtime>.json`: what the last apply for that runtime wrote, to tell our writes from later edits. */
export interface ApplyManifest {
  profile_id: string;
  runtime: string;
  /** Path → sha256 of the file as the apply left it. */
  files: Record<string, string>;
  /** Path → the fragment the profile emitted into a merged (json/toml) file; absent in manifests written before. */
  emitted?: Record<string, string>;
  /** Files written whole that Brainstem wrote (not ones it found already identical); absent in manifests written before. */
  owned?: string[];
  /** Directories Brainstem created for its files, so they can go once emptied; absent in manifests written before. */
  dirs?: string[];
}

/** One manifest per (profile, runtime): applying for one runtime must not forget the files another one wrote. */
export const manifestPath = (profileId: string, runtime: EmitRuntime) => `.brainstem/applied-${profileId}.${runtime}.json`;

/** The single per-profile manifest written before manifests were per runtime (profile ids hold no dot, so names cannot clash). */
export const legacyManifestPath = (profileId: string) => `.brainstem/applied-${profileId}.json`;

/** The config file each runtime's emitter always writes, and only it: what attributes a manifest that names no runtime. */
const CONFIG_FILES: Record<EmitRuntime, string> = {
  'claude-code': '.claude/settings.json',
  codex: '.codex/config.toml',
  'gemini-cli': '.gemini/settings.json',
  opencode: 'opencode.json',
};

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * create: no file yet. unchanged: the merge changes nothing. drift: applying would change a file and lose something
 * of the user's (see `driftReason`). update: otherwise.
 */
export function planFiles(emitted: readonly EmittedFile[], existing: ReadonlyMap<string, string | null>, manifest: ApplyManifest | null, profileId: string): PlannedFile[] {
  return emitted.map((file) => {
    const kind = file.merge === 'json' || file.merge === 'toml' ? { fragment: file.content } : file.merge === 'owned' ? { whole: true as const } : {};
    const current = existing.get(file.path) ?? null;
    if (current === null) return { path: file.path, content: file.content, action: 'create', ...kind };
    const content = mergeFile(file, current, profileId, manifest?.emitted?.[file.path]);
    if (content === current) return { path: file.path, content, action: 'unchanged', ...kind };
    const reason = driftReason(file, current, manifest);
    return reason ? { path: file.path, content, action: 'drift', reason, ...kind } : { path: file.path, content, action: 'update', ...kind };
  });
}

/**
 * comments_would_be_lost: a TOML file is rewritten from its parsed values, and the parser keeps no comments (checked
 * first: unlike an edit, that loss does not show in the values). edited_since_apply: the file's hash differs from the
 * manifest's. not_written_by_brainstem: a whole file Brainstem did not write (no manifest records it, or the apply that
 * recorded it found it already identical) is the user's, and writing it whole would replace it. Merged files keep the
 * user's keys, so being unrecorded is no loss for them.
 */
function driftReason(file: EmittedFile, current: string, manifest: ApplyManifest | null): DriftReason | undefined {
  if (file.merge === 'toml' && tomlHasComment(current)) return 'comments_would_be_lost';
  const recorded = manifest?.files[file.path];
  if (recorded !== undefined && recorded !== sha256(current)) return 'edited_since_apply';
  if (file.merge === 'owned' && !wroteWhole(manifest, file.path)) return 'not_written_by_brainstem';
  return undefined;
}

/** Whether the manifest says Brainstem wrote this whole file; one from before `owned` was kept vouches for every file it lists. */
function wroteWhole(manifest: ApplyManifest | null, path: string): boolean {
  return manifest?.owned ? manifest.owned.includes(path) : manifest?.files[path] !== undefined;
}

/**
 * The manifest after an apply. `owned` lists the whole files Brainstem wrote, now or before (an identical file that
 * was already there is the user's); `dirs` the directories it created and has not removed.
 */
export function nextManifest(
  profileId: string,
  runtime: string,
  planned: readonly PlannedFile[],
  previous: ApplyManifest | null = null,
  dirs: { created: readonly string[]; removed: readonly string[] } = { created: [], removed: [] },
): ApplyManifest {
  const emitted = Object.fromEntries(planned.flatMap((f) => (f.fragment !== undefined ? [[f.path, f.fragment]] : [])));
  const owned = planned.filter((f) => f.whole && (f.action !== 'unchanged' || wroteWhole(previous, f.path))).map((f) => f.path);
  const keptDirs = [...new Set([...(previous?.dirs ?? []), ...dirs.created])].filter((d) => !dirs.removed.includes(d)).sort();
  return { profile_id: profileId, runtime, files: Object.fromEntries(planned.map((f) => [f.path, sha256(f.content)])), emitted, owned, dirs: keptDirs };
}

/**
 * The files the last apply for this runtime recorded and this emission no longer has, as they are now: gone already
 * (left out), a whole file Brainstem wrote and nobody changed since (remove), anything else (kept: edited, or from a
 * manifest written before `owned` was kept, which cannot tell Brainstem's files from files it found there).
 */
export function planWithdrawn(emitted: readonly EmittedFile[], existing: ReadonlyMap<string, string | null>, manifest: ApplyManifest | null): WithdrawnFile[] {
  return withdrawnCandidates(emitted, manifest).flatMap((path) => {
    const current = existing.get(path) ?? null;
    if (current === null) return [];
    const ours = manifest?.owned?.includes(path) === true && sha256(current) === manifest.files[path];
    return [ours ? { path, content: '', action: 'remove' as const } : { path, content: current, action: 'kept' as const }];
  });
}

/** The recorded paths this emission no longer has: what `planWithdrawn` needs read. */
export function withdrawnCandidates(emitted: readonly EmittedFile[], manifest: ApplyManifest | null): string[] {
  if (!manifest) return [];
  const now = new Set(emitted.map((f) => f.path));
  return Object.keys(manifest.files).filter((p) => !now.has(p));
}

/** The directories above `path`, deepest first (`a/b/c.md` → `a/b`, `a`). */
export function parentDirs(path: string): string[] {
  const parts = path.split('/').slice(0, -1);
  return parts.map((_, i) => parts.slice(0, parts.length - i).join('/'));
}

/**
 * This runtime's manifest, from the text of its own file (null if absent) or else of the legacy per-profile file.
 * A legacy manifest is the last apply's, whatever its runtime: it counts only for the runtime it records.
 */
export function selectManifest(runtime: EmitRuntime, own: string | null, legacy: string | null): { manifest: ApplyManifest | null; legacy: boolean } {
  if (own !== null) return { manifest: parseManifest(own), legacy: false };
  const old = parseManifest(legacy);
  return old?.runtime === runtime ? { manifest: old, legacy: true } : { manifest: null, legacy: false };
}

export function parseManifest(text: string | null): ApplyManifest | null {
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as unknown;
    if (!isPlainObject(value) || !isPlainObject(value.files)) return null;
    const manifest = value as unknown as ApplyManifest;
    // Apply always recorded the runtime; a manifest without one (edited by hand) is the runtime whose config file it
    // lists. One that lists none or several cannot be attributed and is ignored, which is safe: nothing is withdrawn
    // on its word, and whole files it does not vouch for are refused as drift rather than overwritten.
    if (typeof value.runtime !== 'string') {
      const listed = EMIT_RUNTIMES.filter((r) => CONFIG_FILES[r] in manifest.files);
      if (listed.length !== 1) return null;
      manifest.runtime = listed[0];
    }
    // Fragments that are not all text cannot be withdrawn safely: read as a manifest from before they were kept.
    const emitted = value.emitted;
    if (!isPlainObject(emitted) || !Object.values(emitted).every((f) => typeof f === 'string')) delete manifest.emitted;
    // Lists that are not all text are read as absent: nothing is removed on their word.
    for (const key of ['owned', 'dirs'] as const) {
      const list = value[key];
      if (!Array.isArray(list) || !list.every((p) => typeof p === 'string')) delete manifest[key];
    }
    return manifest;
  } catch {
    return null;
  }
}

/**
 * Emitted content merged into the existing text, per the file's merge kind. `previous` is what the last apply
 * emitted into this file (json/toml): what it set and the profile no longer sets is withdrawn first, so removing a
 * permission, a server or a hook from a profile removes it from the file on the next apply.
 */
export function mergeFile(file: EmittedFile, current: string, profileId: string, previous?: string): string {
  switch (file.merge) {
    case 'owned':
      return file.content;
    case 'json': {
      const next = JSON.parse(file.content) as unknown;
      const base = parseExisting(file.path, current, (t) => JSON.parse(t) as unknown);
      const merged = mergePatch(previous === undefined ? base : withdraw(base, JSON.parse(previous), next), next);
      const out = `${JSON.stringify(merged, null, 2)}\n`;
      return sameDocument(out, current, JSON.parse) ? current : out;
    }
    case 'toml': {
      const next = parseTomlExact(file.content);
      const base = parseExisting(file.path, current, parseTomlExact);
      const merged = mergePatch(previous === undefined ? base : withdraw(base, parseTomlExact(previous), next), next) as Record<string, unknown>;
      const out = `${stringifyToml(merged)}\n`;
      return sameDocument(out, current, parseTomlExact) ? current : out;
    }
    case 'block':
      return mergeBlock(current, file.content, profileId);
  }
}

/**
 * `current` without what `previous` (the last emission) set and `next` no longer sets. A value the user changed
 * since is theirs and stays; inside an object the user added to, only our keys go; an object we emptied goes.
 */
export function withdraw(current: Record<string, unknown>, previous: unknown, next: unknown): Record<string, unknown> {
  if (!isPlainObject(previous)) return current;
  const out: Record<string, unknown> = { ...current };
  const nextObject = isPlainObject(next) ? next : {};
  for (const [key, was] of Object.entries(previous)) {
    if (!(key in out)) continue;
    const now = out[key];
    const stays = key in nextObject;
    if (isPlainObject(was) && isPlainObject(now) && (!stays || isPlainObject(nextObject[key]))) {
      const inner = withdraw(now, was, stays ? nextObject[key] : {});
      if (Object.keys(inner).length === 0 && !stays) delete out[key];
      else out[key] = inner;
    } else if (!stays && sameValue(now, was)) {
      delete out[key];
    }
  }
  return out;
}

function sameValue(a: unknown, b: unknown): boolean {
  const text = (v: unknown) => JSON.stringify(canonical(v), (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
  return text(a) === text(b);
}

/** Keys sorted at every level, so two documents compare by content, not by key order. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (!isPlainObject(v)) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]));
}

function parseExisting(path: string, text: string, parse: (text: string) => unknown): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = parse(text);
  } catch (e) {
    throw new DomainError('apply_target_malformed', `${path} exists but does not parse (${(e as Error).message.split('\n')[0]}); fix or remove it before applying`, { path });
  }
  if (!isPlainObject(value)) throw new DomainError('apply_target_malformed', `${path} exists but is not an object; fix or remove it before applying`, { path });
  return value;
}

/** A user's formatting (key order included) survives when the merge changes no value. */
function sameDocument(a: string, b: string, parse: (text: string) => unknown): boolean {
  try {
    return sameValue(parse(a), parse(b));
  } catch {
    return false;
  }
}

/**
 * Whether a TOML document (one that parses) holds a comment: a `#` outside every kind of string. Strings are skipped
 * by their quotes (a run of three or more opens or closes a multi-line one; a closing run may carry up to two quotes of
 * content), escapes by their backslash in basic strings; nothing else of TOML matters here.
 */
export function tomlHasComment(text: string): boolean {
  let quote: '"' | "'" | null = null;
  let multiline = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === null) {
      if (c === '#') return true;
      if (c !== '"' && c !== "'") continue;
      const run = quoteRun(text, i);
      if (run === 2) i += 1; // an empty string
      else {
        quote = c;
        multiline = run >= 3;
        i += multiline ? 2 : 0;
      }
    } else if (c === '\\' && quote === '"') {
      i += 1;
    } else if (c === quote) {
      const run = quoteRun(text, i);
      if (!multiline || run >= 3) quote = null;
      i += (multiline ? run : 1) - 1;
    }
  }
  return false;
}

function quoteRun(text: string, at: number): number {
  let end = at;
  while (text[end] === text[at]) end++;
  return end - at;
}

/** TOML integers beyond 2^53 (valid TOML, 64-bit) are read as bigint rather than refused; stringify writes them back. */
function parseTomlExact(text: string): Record<string, unknown> {
  return parseToml(text, { integersAsBigInt: 'asNeeded' });
}

/** Replaces this profile's marked block, or appends it after a blank line; the rest of the file is the user's. */
function mergeBlock(current: string, block: string, profileId: string): string {
  const start = current.indexOf(blockStart(profileId));
  const endMarker = blockEnd(profileId);
  const end = start >= 0 ? current.indexOf(endMarker, start) : -1;
  if (start >= 0 && end >= 0) {
    let after = end + endMarker.length;
    if (current[after] === '\n') after += 1;
    return current.slice(0, start) + block + current.slice(after);
  }
  if (current === '') return block;
  return `${current}${current.endsWith('\n') ? '' : '\n'}\n${block}`;
}
