import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_PROFILE_YAML_BYTES, PROFILE_ID_PATTERN } from './profile.schema';

/** Identity of one version of a file: a hand edit or an atomic replace changes at least one of these. */
export interface FileStamp {
  mtimeMs: number;
  size: number;
  ino: number;
}

export type StoredFile = { id: string; stamp: FileStamp } & ({ text: string } | { tooLarge: true } | { notRegular: true });

/**
 * The port the service keeps its files behind: one `<id>.yaml` per profile plus one state document
 * (default profile, project bindings, service-managed metadata).
 */
export interface ProfileStore {
  readonly dir: string;
  /** Every `<id>.yaml` whose name is a valid id; empty when the directory does not exist yet. */
  list(): Promise<Array<{ id: string; stamp: FileStamp }>>;
  /** As list(), without the stamps: for a caller that reads every file anyway. */
  ids(): Promise<string[]>;
  stamp(id: string): Promise<FileStamp | null>;
  read(id: string): Promise<StoredFile | null>;
  /** Atomic: readers see the old or the new file, never a partial one. */
  write(id: string, text: string): Promise<FileStamp>;
  remove(id: string): Promise<boolean>;
  readState(): Promise<string | null>;
  writeState(text: string): Promise<void>;
  /** Renames the state file aside (kept for inspection, never deleted); answers its new name. */
  setStateAside(): Promise<string>;
}

const STATE_FILE = '.brainstem-profiles.json';
const YAML_EXT = '.yaml';

export class FsProfileStore implements ProfileStore {
  constructor(readonly dir: string) {}

  async ids(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (e) {
      if (isNotFound(e)) return [];
      throw e;
    }
    return names.filter((n) => n.endsWith(YAML_EXT)).map((n) => n.slice(0, -YAML_EXT.length)).filter((id) => PROFILE_ID_PATTERN.test(id));
  }

  async list(): Promise<Array<{ id: string; stamp: FileStamp }>> {
    const ids = await this.ids();
    const stamps = await Promise.all(ids.map(async (id) => ({ id, stamp: await this.stamp(id) })));
    return stamps.filter((s): s is { id: string; stamp: FileStamp } => s.stamp !== null);
  }

  async stamp(id: string): Promise<FileStamp | null> {
    try {
      return toStamp(await stat(this.pathOf(id)));
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  async read(id: string): Promise<StoredFile | null> {
    let handle;
    try {
      // Non-blocking, so a FIFO named like a profile cannot hold the open (and a thread of the pool) forever.
      handle = await open(this.pathOf(id), constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
    try {
      // Stat and read through one descriptor, so the stamp belongs to the text even if the file is replaced meanwhile.
      const stats = await handle.stat();
      const stamp = toStamp(stats);
      if (!stats.isFile()) return { id, stamp, notRegular: true };
      if (stamp.size > MAX_PROFILE_YAML_BYTES) return { id, stamp, tooLarge: true };
      // The size the stamp names, read at once: readFile would stat the file again first.
      const buffer = Buffer.allocUnsafe(stamp.size);
      let read = 0;
      for (let n = -1; n !== 0 && read < buffer.length; read += n) n = (await handle.read(buffer, read, buffer.length - read, read)).bytesRead;
      return { id, stamp, text: buffer.toString('utf8', 0, read) };
    } finally {
      await handle.close();
    }
  }

  async write(id: string, text: string): Promise<FileStamp> {
    const path = this.pathOf(id);
    await this.atomicWrite(path, text);
    return toStamp(await stat(path));
  }

  async remove(id: string): Promise<boolean> {
    try {
      await unlink(this.pathOf(id));
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  async readState(): Promise<string | null> {
    let handle;
    try {
      handle = await open(join(this.dir, STATE_FILE), constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
    try {
      // Anything but a regular file reads as empty, which the service treats as a damaged state file.
      if (!(await handle.stat()).isFile()) return '';
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  }

  writeState(text: string): Promise<void> {
    return this.atomicWrite(join(this.dir, STATE_FILE), text);
  }

  async setStateAside(): Promise<string> {
    const aside = `${STATE_FILE}.damaged-${Date.now()}`;
    await rename(join(this.dir, STATE_FILE), join(this.dir, aside));
    return aside;
  }

  private pathOf(id: string): string {
    // Defence in depth: the service validates ids already; a non-slug must never reach a path.
    if (!PROFILE_ID_PATTERN.test(id)) throw new Error(`not a profile id: ${JSON.stringify(id)}`);
    return join(this.dir, id + YAML_EXT);
  }

  /** Temp file in the same directory (same filesystem), synced, then renamed over the target; removed on failure. */
  private async atomicWrite(path: string, text: string): Promise<void> {
    await this.ensureDir();
    const temp = join(this.dir, `.tmp-${randomBytes(6).toString('hex')}`);
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(text, 'utf8');
        await handle.datasync();
      } finally {
        await handle.close();
      }
      await rename(temp, path);
    } catch (e) {
      await unlink(temp).catch(() => undefined);
      throw e;
    }
  }

  /** Created on first use; checked on every write because someone may remove it while we run. */
  private async ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
  }
}

function toStamp(s: { mtimeMs: number; size: number; ino: number }): FileStamp {
  return { mtimeMs: s.mtimeMs, size: s.size, ino: s.ino };
}

function isNotFound(e: unknown): boolean {
  return (e as NodeJS.ErrnoException)?.code === 'ENOENT';
}
