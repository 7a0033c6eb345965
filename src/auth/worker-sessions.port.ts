/** What telling a worker's credential from its session takes: the two look-ups the guard and the MCP endpoint make. */
export interface WorkerSessions {
  /** The session id when its worker may still act (a worker credential is revoked when its session exits). */
  liveWorker(sessionId: string): string | null;
  /** The session's id and alias, or null when no session has that id or alias. */
  find(idOrAlias: string): { id: string; alias: string } | null;
}

/** Provided by the sessions module. */
export const WORKER_SESSIONS = Symbol('WorkerSessions');
