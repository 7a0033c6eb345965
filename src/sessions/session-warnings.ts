/**
 * What the status of a session warns of, pure. Two live sessions in one git work tree (no worktree of their own, or
 * the same one reused) edit the same files, run each other's half-written code and commit over each other: both are
 * told, and so is the main brain (the round prompt).
 */

export interface SessionWarning {
  code: 'shared_work_tree';
  message: string;
  /** The other sessions (aliases) in the same work tree. */
  sessions: string[];
  work_tree: string;
}

/** A session as its warnings read it (a SessionActor is one). */
export interface WorkTreeMember {
  id: string;
  live: boolean;
  context: { alias: string; work_tree?: string | null };
}

/**
 * The warnings of one session, given the sessions that may share its work tree (any others are passed over): a live
 * session is warned of the other live ones in the same tree, in the order given; an exited one, or one outside any
 * git work tree, of nothing. One session's own, so a status costs the sessions of its tree, not every session's.
 */
export function workTreeWarnings(session: WorkTreeMember, sharing: Iterable<WorkTreeMember>): SessionWarning[] {
  const tree = session.context.work_tree ?? null;
  if (!session.live || tree === null) return [];
  const others: string[] = [];
  for (const o of sharing) if (o.id !== session.id && o.live && o.context.work_tree === tree) others.push(o.context.alias);
  if (others.length === 0) return [];
  const message = `${others.join(', ')} also ${others.length === 1 ? 'works' : 'work'} in the git work tree ${tree}: they can overwrite each other's changes; start sessions with isolation "worktree" to keep them apart`;
  return [{ code: 'shared_work_tree', message, sessions: others, work_tree: tree }];
}
