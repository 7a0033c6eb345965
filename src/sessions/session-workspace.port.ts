/** A file Brainstem writes for one session: relative to the session's directory, `/`-separated. */
export interface SessionFile {
  path: string;
  content: string;
}

/**
 * The filesystem as sessions use it: whether a worker can start in a directory, and the files written for one session
 * (its runtime's configuration, in a directory of its own, so starting a session never writes to the user's repo).
 * More ways of preparing where a worker runs (a git worktree per session) are more methods here.
 */
export interface SessionWorkspace {
  isDirectory(path: string): Promise<boolean>;
  /** Where the session's own files go: named before they are written, since the runtime's flags point into it. */
  configDir(sessionId: string): string;
  /** Writes the files into the session's directory (fresh: the session is new, so nothing there to merge with). */
  writeConfig(sessionId: string, files: readonly SessionFile[]): Promise<void>;
  /** Removes the session's directory and what is in it (a create that did not go through). */
  removeConfig(sessionId: string): Promise<void>;
}

export const SESSION_WORKSPACE = Symbol('SessionWorkspace');
