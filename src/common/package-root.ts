import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The directory of the package this file belongs to: the same whether it runs compiled (dist/src/…) or from source (tests). */
export function packageRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/**
 * Whether this is an installed package (`npm install -g` of the packed tarball) rather than a clone: the tarball carries
 * the build and no sources (package.json `files`).
 */
export function isInstalledPackage(root: string = packageRoot()): boolean {
  return !existsSync(join(root, 'src'));
}
