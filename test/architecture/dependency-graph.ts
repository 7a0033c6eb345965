import { join } from 'node:path';
import madge from 'madge';

export const ROOT = join(__dirname, '..', '..');

/**
 * Each file under the given paths with the files it imports, relative to their common base. Type-only imports count:
 * a reader follows them as well.
 */
export const dependencyGraph = (paths: string[]) =>
  madge(paths, {
    fileExtensions: ['ts'],
    tsConfig: join(ROOT, 'tsconfig.json'),
    detectiveOptions: { ts: { skipTypeImports: false }, es6: { skipTypeImports: false } },
  });
