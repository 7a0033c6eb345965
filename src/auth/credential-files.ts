import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CredentialStore, SecretName } from './credentials';

/**
 * Secrets as files of mode 0600 in the data directory (the journal directory). A file another user can read
 * is refused rather than used: its secret may already be known.
 */
export class FileCredentialStore implements CredentialStore {
  constructor(private readonly dir: string) {}

  pathOf(name: SecretName): string {
    return join(this.dir, name);
  }

  loadOrCreate(name: SecretName, create: () => string): string {
    const text = this.load(name);
    if (text !== null) return text;
    const value = create();
    this.replace(name, value);
    return value;
  }

  load(name: SecretName): string | null {
    const path = this.pathOf(name);
    let text: string;
    try {
      text = readFileSync(path, 'utf8').trim();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return null;
    }
    if (text === '') return null;
    const mode = statSync(path).mode & 0o777;
    if (mode & 0o077) {
      throw new CredentialFileError(`${path} is readable by other users (mode ${mode.toString(8)}); run: chmod 600 ${path}`);
    }
    return text;
  }

  /** Written beside and renamed over, so a reader never sees half a token; created 0600 from the start. */
  replace(name: SecretName, value: string): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const path = this.pathOf(name);
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, value + '\n', { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, path);
  }
}

export class CredentialFileError extends Error {
  override name = 'CredentialFileError';
}
