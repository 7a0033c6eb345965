import { createHash } from 'node:crypto';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { DomainError } from '../../common/domain-error';
import { EmittedFile, blockEnd, blockStart } from '../emitters';
import { isPlainObject, mergePatch } from '../merge-patch';

/**
 * What applying emitted files to a directory would do, file by file. Pure: the caller reads the existing
 * files and the manifest, and writes the result.
 */

export type FileAction = 'create' | 'update' | 'unchanged' | 'drift';

export interface PlannedFile {
  path: string;
  /** The file as it would be after apply: emitted content merged into what exists. */
  content: string;
  action: FileAction;
}

/** `.brainstem/applied-<profile-id>.json`: what the last apply wrote, to tell our writes from later edits. */
export interface ApplyManifest {
  profile_id: string;
  runtime: string;
  files: Record<string, string>;
}

export const manifestPath = (profileId: string) => `.brainstem/applied-${profileId}.json`;

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * create: no file yet. unchanged: the merge changes nothing. drift: the file changed since our last apply (its hash
 * differs from the manifest's) and applying would change it again. update: otherwise.
 */
export function planFiles(emitted: readonly EmittedFile[], existing: ReadonlyMap<string, string | null>, manifest: ApplyManifest | null, profileId: string): PlannedFile[] {
  return emitted.map((file) => {
    const current = existing.get(file.path) ?? null;
    if (current === null) return { path: file.path, content: file.content, action: 'create' };
    const content = mergeFile(file, current, profileId);
    if (content === current) return { path: file.path, content, action: 'unchanged' };
    const recorded = manifest?.files[file.path];
    const drifted = recorded !== undefined && recorded !== sha256(current);
    return { path: file.path, content, action: drifted ? 'drift' : 'update' };
  });
}

export function nextManifest(profileId: string, runtime: string, planned: readonly PlannedFile[]): ApplyManifest {
  return { profile_id: profileId, runtime, files: Object.fromEntries(planned.map((f) => [f.path, sha256(f.content)])) };
}

export function parseManifest(text: string | null): ApplyManifest | null {
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return isPlainObject(value) && isPlainObject(value.files) ? (value as unknown as ApplyManifest) : null;
  } catch {
    return null;
  }
}

/** Emitted content merged into the existing text, per the file's merge kind. */
export function mergeFile(file: EmittedFile, current: string, profileId: string): string {
  switch (file.merge) {
    case 'owned':
      return file.content;
    case 'json': {
      const merged = mergePatch(parseExisting(file.path, current, (t) => JSON.parse(t) as unknown), JSON.parse(file.content));
      const out = `${JSON.stringify(merged, null, 2)}\n`;
      return sameJson(out, current) ? current : out;
    }
    case 'toml': {
      const merged = mergePatch(parseExisting(file.path, current, parseToml), parseToml(file.content)) as Record<string, unknown>;
      const out = `${stringifyToml(merged)}\n`;
      return sameToml(out, current) ? current : out;
    }
    case 'block':
      return mergeBlock(current, file.content, profileId);
  }
}

function parseExisting(path: string, text: string, parse: (text: string) => unknown): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = parse(text);
  } catch (e) {
    throw new DomainError('invalid_input', `${path} exists but does not parse (${(e as Error).message.split('\n')[0]}); fix or remove it before applying`, { path });
  }
  if (!isPlainObject(value)) throw new DomainError('invalid_input', `${path} exists but is not an object; fix or remove it before applying`, { path });
  return value;
}

/** A user's formatting survives when the merge changes no value. */
function sameJson(a: string, b: string): boolean {
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return false;
  }
}

function sameToml(a: string, b: string): boolean {
  try {
    return JSON.stringify(parseToml(a)) === JSON.stringify(parseToml(b));
  } catch {
    return false;
  }
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
