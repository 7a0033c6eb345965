import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SRT_MOUNT_NAMES } from '../sandbox/sandbox-launch';
import { StatusEntry } from './git-parse';

/**
 * An empty file srt put where a protected name was missing, while a sandboxed worker runs (its .bashrc, .mcp.json…):
 * the worker cannot write those names, so such a file is never its work.
 */
async function sandboxMountPoint(cwd: string, entry: StatusEntry): Promise<boolean> {
  if (entry.index !== '?' || !SRT_MOUNT_NAMES.includes(entry.path)) return false;
  return stat(join(cwd, entry.path)).then(
    (st) => st.isFile() && st.size === 0,
    () => false,
  );
}

/** A work tree's status less srt's mount points: a diff, a merge and a removal see only the worker's changes. */
export async function withoutSandboxMounts(cwd: string, status: readonly StatusEntry[]): Promise<StatusEntry[]> {
  const mounts = await Promise.all(status.map((s) => sandboxMountPoint(cwd, s)));
  return status.filter((_, i) => !mounts[i]);
}
