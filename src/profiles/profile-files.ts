import { BUILTIN_DOCS } from './profile-document';
import { PROFILE_ID_PATTERN } from './profile.schema';
import { FileStamp, ProfileStore, StoredFile } from './profile.store';

/** A profile file as read: its text, or why it has none (over the size limit, not a regular file). */
export interface DiskFile {
  id: string;
  stamp: FileStamp;
  text: string | null;
  unreadable: string | null;
}

/** A file read by a scan, with the version its profile's stream had just before: what the file is compared against. */
export interface ReadFile extends DiskFile {
  observed_version: number;
}

/**
 * What this node last saw of a file. `agreed`: the journal held that text then (the node wrote it, or read it and
 * found the journal agreeing), so the file unchanged since is no hand edit, even when the journal has moved on and its
 * write is still to come.
 */
interface Seen extends DiskFile {
  agreed: boolean;
}


/**
 * The profile files on disk, the projection users edit by hand, behind the store port: scans that read only what
 * changed (a file's stamp: mtime, size, inode), and the writes the journal's changes make.
 */
export class ProfileFiles {
  private readonly seen = new Map<string, Seen>();

  constructor(private readonly store: ProfileStore) {}

  get dir(): string {
    return this.store.dir;
  }

  /**
   * Looks at the files (all, or those named; a file named like a built-in is not read): forgets those gone, and reads
   * those changed since they were last seen or never agreed with the journal, handing each to `inspect` as it arrives
   * (so its work overlaps the reads still under way). `version` tells each one's stream version before it is read.
   */
  async scan(only: readonly string[] | undefined, version: (id: string) => number, inspect: (file: ReadFile) => void): Promise<void> {
    const ids = only?.filter((id) => PROFILE_ID_PATTERN.test(id) && !BUILTIN_DOCS.has(id));
    // Nothing seen yet (boot): every file is read, and the read's own stat is stamp enough.
    const listed: Array<{ id: string; stamp: FileStamp | null }> = ids
      ? (await Promise.all(ids.map(async (id) => ({ id, stamp: await this.store.stamp(id) })))).filter((f) => f.stamp !== null)
      : this.seen.size === 0
        ? (await this.store.ids()).map((id) => ({ id, stamp: null }))
        : await this.store.list();
    const files = listed.filter((f) => !BUILTIN_DOCS.has(f.id));
    const present = new Set(files.map((f) => f.id));
    for (const id of ids ?? [...this.seen.keys()]) if (!present.has(id)) this.seen.delete(id);
    const stale = files.filter((f) => f.stamp === null || !this.unchanged(f.id, f.stamp));
    await Promise.all(
      stale.map(async (f) => {
        const observed_version = version(f.id);
        const file = await this.read(f.id);
        if (file) inspect({ ...file, observed_version });
      }),
    );
  }

  /** Ids of the files the last scans found. */
  ids(): string[] {
    return [...this.seen.keys()];
  }

  /** The file as last seen, when it is unchanged since and agreed with the journal then. */
  agreed(id: string): DiskFile | null {
    const s = this.seen.get(id);
    return s?.agreed ? s : null;
  }

  /** The file as last seen, agreed or not. */
  lastSeen(id: string): DiskFile | null {
    return this.seen.get(id) ?? null;
  }

  /** Remembers a file read, and whether the journal holds what it says. */
  saw(file: DiskFile, agreed: boolean): void {
    this.seen.set(file.id, { ...file, agreed });
  }

  /** The journal's text written to the file (atomic), which then agrees with the journal. */
  async write(id: string, text: string): Promise<void> {
    const stamp = await this.store.write(id, text);
    this.seen.set(id, { id, stamp, text, unreadable: null, agreed: true });
  }

  /** Writes the journal's text unless the file changed since it was last seen (a hand edit the next scan journals). */
  async writeIfUnchanged(id: string, text: string): Promise<void> {
    const stamp = await this.store.stamp(id);
    const seen = this.seen.get(id);
    if (stamp === null ? seen !== undefined : !seen || !sameStamp(stamp, seen.stamp)) return;
    if (seen?.text === text) return;
    await this.write(id, text);
  }

  async remove(id: string): Promise<void> {
    await this.store.remove(id);
    this.seen.delete(id);
  }

  /** The mtime of each file when it last agreed with the journal: the state file keeps them across restarts. */
  agreedMtime(id: string): number | undefined {
    const s = this.seen.get(id);
    return s?.agreed ? s.stamp.mtimeMs : undefined;
  }

  async read(id: string): Promise<DiskFile | null> {
    return toDiskFile(await this.store.read(id));
  }

  private unchanged(id: string, stamp: FileStamp): boolean {
    const s = this.seen.get(id);
    return s !== undefined && s.agreed && sameStamp(s.stamp, stamp);
  }
}

function toDiskFile(file: StoredFile | null): DiskFile | null {
  if (!file) return null;
  if ('text' in file) return { id: file.id, stamp: file.stamp, text: file.text, unreadable: null };
  return { id: file.id, stamp: file.stamp, text: null, unreadable: 'tooLarge' in file ? 'the file is over the limit of 256 KiB' : 'not a regular file' };
}

export function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;
}
