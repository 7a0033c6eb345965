import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A temporary directory, made on the first read of `path`: jest runs the body of a skipped describe too
 * (only its hooks and tests are skipped), so a directory made there up front was never removed.
 */
export function tempDir(prefix = 'brainstem-'): { readonly path: string; remove: () => void } {
  let path: string | null = null;
  return {
    get path() {
      return (path ??= mkdtempSync(join(tmpdir(), prefix)));
    },
    remove: () => {
      // Retried: a child that outlived its test (a CLI writing its state as it exits) can still be adding files.
      if (path !== null) rmSync(path, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    },
  };
}
