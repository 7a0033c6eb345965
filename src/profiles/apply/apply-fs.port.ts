/** The filesystem work apply needs, behind one port (the Node adapter is `NodeApplyFs`). */
export interface ApplyFs {
  /** The real path of an existing, writable directory; a DomainError (4xx) otherwise. */
  targetDir(dir: string): Promise<string>;
  /** A file under `root` (relative path), or null if absent; refuses paths that lead outside `root` through symlinks. */
  read(root: string, path: string): Promise<string | null>;
  /** Writes every file to a temp name first, then renames them all into place; nothing is renamed if a write fails. */
  writeAll(root: string, files: ReadonlyArray<{ path: string; content: string }>): Promise<void>;
  /** Whether anything exists at `path` under `root` (a symlink counts as existing; it is not followed). */
  exists(root: string, path: string): Promise<boolean>;
  /** Removes a regular file under `root`; absent is fine; refuses paths that lead outside `root` through symlinks. */
  remove(root: string, path: string): Promise<void>;
  /** Removes a directory under `root` if it is empty; answers whether it is gone. */
  removeEmptyDir(root: string, path: string): Promise<boolean>;
  /** The text files of a skill directory (paths relative to it), or null if it holds no SKILL.md. */
  readSkill(dir: string): Promise<Array<{ path: string; content: string }> | null>;
}
