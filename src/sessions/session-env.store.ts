import { mkdir, open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

export type EnvMap = Record<string, string>;

/**
 * Where a session's env values live while it can still run. They are often secrets (API keys, tokens), so
 * they stay out of the append-only journal, which every audit reader, SSE client and plugin sees and which
 * can never be redacted; the journal records only their names. A resume after a restart reads them back.
 */
export interface SessionEnvStore {
  save(sessionId: string, env: EnvMap): Promise<void>;
  /** null when nothing is stored for the session (or what is stored is unreadable). */
  load(sessionId: string): Promise<EnvMap | null>;
  remove(sessionId: string): Promise<void>;
  /** The sessions something is stored for (a save cut short by a crash included). */
  list(): Promise<string[]>;
}

const SUFFIX = '.json';
const TMP = '.tmp';

const isEnvMap = (v: unknown): v is EnvMap =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

/** One JSON file per session, readable by the service's user only, written durably before the session is journaled. */
export class FileSessionEnvStore implements SessionEnvStore {
  constructor(private readonly dir: string) {}

  private path(sessionId: string): string {
    return join(this.dir, sessionId + SUFFIX);
  }

  async save(sessionId: string, env: EnvMap): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const path = this.path(sessionId);
    const tmp = path + TMP;
    const file = await open(tmp, 'w', 0o600);
    try {
      await file.writeFile(JSON.stringify(env));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
    // The rename is durable only once the directory is synced; the journal will name this session.
    const dir = await open(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  async load(sessionId: string): Promise<EnvMap | null> {
    let text: string;
    try {
      text = await readFile(this.path(sessionId), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    try {
      const parsed: unknown = JSON.parse(text);
      return isEnvMap(parsed) ? parsed : null;
    } catch {
      return null;
    }
  }

  async remove(sessionId: string): Promise<void> {
    const path = this.path(sessionId);
    await rm(path, { force: true });
    await rm(path + TMP, { force: true });
  }

  async list(): Promise<string[]> {
    try {
      const ids = new Set<string>();
      for (const f of await readdir(this.dir)) {
        const name = f.endsWith(TMP) ? f.slice(0, -TMP.length) : f;
        if (name.endsWith(SUFFIX)) ids.add(name.slice(0, -SUFFIX.length));
      }
      return [...ids];
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
  }
}
