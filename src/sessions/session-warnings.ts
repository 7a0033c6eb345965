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

export interface WorkTreeMember {
  id: string;
  alias: string;
  live: boolean;
  work_tree: string | null;
}

/** Each live session's warnings, by id; sessions without any are left out. */
export function sharedWorkTreeWarnings(sessions: readonly WorkTreeMember[]): Map<string, SessionWarning[]> {
  const byTree = new Map<string, WorkTreeMember[]>();
  for (const s of sessions) {
    if (!s.live || s.work_tree === null) continue;
    byTree.set(s.work_tree, [...(byTree.get(s.work_tree) ?? []), s]);
  }
  const out = new Map<string, SessionWarning[]>();
  for (const [tree, members] of byTree) {
    if (members.length < 2) continue;
    for (const m of members) {
      const others = members.filter((o) => o !== m).map((o) => o.alias);
      const message = `${others.join(', ')} also ${others.length === 1 ? 'works' : 'work'} in the git work tree ${tree}: they can overwrite each other's changes; start sessions with isolation "worktree" to keep them apart`;
      out.set(m.id, [{ code: 'shared_work_tree', message, sessions: others, work_tree: tree }]);
    }
  }
  return out;
}
