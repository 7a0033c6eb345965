import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The executable a command names: a path (relative to cwd) or a name looked up on PATH; null if none. */
export function findExecutable(command: string, pathEnv: string, cwd: string): string | null {
  if (command.includes('/')) {
    const path = isAbsolute(command) ? command : resolve(cwd, command);
    return isExecutableFile(path) ? path : null;
  }
  for (const dir of pathEnv.split(delimiter)) {
    if (!dir) continue;
    const path = join(isAbsolute(dir) ? dir : resolve(cwd, dir), command);
    if (isExecutableFile(path)) return path;
  }
  return null;
}
