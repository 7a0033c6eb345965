/**
 * Collisions between parallel worktree sessions, predicted before any merge, pure: which files two sessions both
 * changed, which pairs git must be asked about (and which cannot conflict), a cache of its answers keyed by what was
 * merged, and a merge order. The git side (snapshots, `git merge-tree`) is worktree-overlap.git.ts.
 */

/** What a session changed since its base, as its snapshot holds it. */
export interface SessionWork {
  session_id: string;
  /** The snapshot's tree: the same tree is the same work, whatever the commits around it. */
  tree: string;
  /** Paths changed since the merge base, committed or not, sorted; a rename is its two paths. */
  files: readonly string[];
}

/** A session's work and where its base branch is now, for the check against that base. */
export interface BaseWork extends SessionWork {
  base_branch: string | null;
  /** The base branch's tip now; null when the session has no base branch (a tag, a commit) or it is gone. */
  base_tip: string | null;
  merge_base: string;
}

/** Whether a merge would stop on conflicts, and on which paths (git may report a conflict it names no path for). */
export interface MergePrediction {
  conflict: boolean;
  conflicting_paths: string[];
}

export interface PairOverlap extends MergePrediction {
  a: string;
  b: string;
  /** Paths both sessions changed. */
  files: string[];
}

export interface BaseOverlap extends MergePrediction {
  session_id: string;
  base_branch: string;
}

/** A merge predicted to go through. */
export const clean = (): MergePrediction => ({ conflict: false, conflicting_paths: [] });

/** The paths two lists share, sorted, each once. */
export function sharedFiles(a: readonly string[], b: readonly string[]): string[] {
  const inB = new Set(b);
  return [...new Set(a.filter((p) => inB.has(p)))].sort();
}

const parentsOf = (path: string): string[] => {
  const parts = path.split('/');
  return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join('/'));
};

/**
 * Whether a merge of the two could conflict at all. Only a path both changed can (renames included: a rename lists
 * the old path, which the other side changed too), or a path one side has as a file and the other as a folder. Any
 * other pair merges cleanly, so git is not asked about it.
 */
export function mayConflict(a: readonly string[], b: readonly string[]): boolean {
  if (a.length === 0 || b.length === 0) return false;
  if (sharedFiles(a, b).length > 0) return true;
  const folders = (files: readonly string[]) => new Set(files.flatMap(parentsOf));
  const foldersOfA = folders(a);
  const foldersOfB = folders(b);
  return a.some((p) => foldersOfB.has(p)) || b.some((p) => foldersOfA.has(p));
}

/**
 * `git merge-tree --write-tree -z --name-only --no-messages` read: exit 0 is clean, exit 1 conflicts; its output is the
 * merged tree's id, then each conflicted path once (NUL-separated). Anything past an empty field (messages, were they
 * asked for) is not a path.
 */
export function parseMergeTreeNames(stdout: string, exitCode: number): MergePrediction {
  if (exitCode === 0) return clean();
  const fields = stdout.split('\0').slice(1);
  const end = fields.indexOf('');
  const paths = end < 0 ? fields : fields.slice(0, end);
  return { conflict: true, conflicting_paths: [...new Set(paths)].sort() };
}

/**
 * Merge predictions by the two things merged (snapshot trees, a base tip), whichever order they come in: an unchanged
 * pair is never asked of git again. A prediction still computing is shared, so two reads at once ask git once; one that
 * failed is forgotten. At most `max` are kept, the least recently used dropped first.
 */
export class OverlapCache {
  private readonly known = new Map<string, Promise<MergePrediction>>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.known.size;
  }

  predict(a: string, b: string, compute: () => Promise<MergePrediction>): Promise<MergePrediction> {
    const key = a < b ? `${a}\0${b}` : `${b}\0${a}`;
    const hit = this.known.get(key);
    if (hit) {
      this.known.delete(key);
      this.known.set(key, hit);
      return hit;
    }
    const computed = (async () => compute())();
    this.known.set(key, computed);
    computed.catch(() => {
      if (this.known.get(key) === computed) this.known.delete(key);
    });
    for (const oldest of this.known.keys()) {
      if (this.known.size <= this.max) break;
      this.known.delete(oldest);
    }
    return computed;
  }
}

/** Merges two snapshots (or a snapshot and a base tip) the way git would, without touching anything. */
export type MergeProbe<W> = (a: W, b: W) => Promise<MergePrediction>;

/**
 * Every pair of sessions once, in the order given (a before b): the files both changed and whether merging the two
 * would conflict. A pair that cannot conflict (mayConflict) asks nothing; the others are asked through the cache.
 */
export function pairOverlaps<W extends SessionWork>(sessions: readonly W[], cache: OverlapCache, merge: MergeProbe<W>): Promise<PairOverlap[]> {
  const pairs = sessions.flatMap((a, i) => sessions.slice(i + 1).map((b) => [a, b] as const));
  return Promise.all(
    pairs.map(async ([a, b]) => {
      const prediction = mayConflict(a.files, b.files) ? await cache.predict(a.tree, b.tree, () => merge(a, b)) : clean();
      return { a: a.session_id, b: b.session_id, files: sharedFiles(a.files, b.files), ...prediction };
    }),
  );
}

/**
 * Each session against its base branch as it is now (another session's merge moved it, say). Sessions without a base
 * branch are left out; one whose base has not moved since it left it (the tip is the merge base) cannot conflict with
 * it, and one that changed nothing neither: git is asked about the others only.
 */
export function baseOverlaps<W extends BaseWork>(sessions: readonly W[], cache: OverlapCache, merge: (work: W, tip: string) => Promise<MergePrediction>): Promise<BaseOverlap[]> {
  const based = sessions.filter((s): s is W & { base_branch: string; base_tip: string } => s.base_branch !== null && s.base_tip !== null);
  return Promise.all(
    based.map(async (s) => {
      const moved = s.base_tip !== s.merge_base && s.files.length > 0;
      const prediction = moved ? await cache.predict(s.tree, s.base_tip, () => merge(s, s.base_tip)) : clean();
      return { session_id: s.session_id, base_branch: s.base_branch, ...prediction };
    }),
  );
}

export interface AgedSession {
  session_id: string;
  /** When the session was created (ms): the older, the earlier among equals. */
  created_at: number;
}

export interface MergeOrderStep {
  session_id: string;
  /** Predicted to merge without conflict after the steps before it: with none of them, nor with its base as it is now. */
  clean: boolean;
  /** The sessions before it in the order that it conflicts with. */
  conflicts_with: string[];
  /** Where it conflicts with its base branch as it is now. */
  base_conflicts: string[];
}

/**
 * An order to merge the sessions in that merges as many as it can without a conflict. Which ones is chosen greedily
 * (the largest such set is NP-hard to find): a session that conflicts with its base as it is now cannot merge cleanly
 * and is left out; of the others, it repeatedly takes the session that conflicts with none taken so far and with the
 * fewest of those still takeable (so it shuts out as few as it can), the oldest among equals (then by id). The ones
 * taken come first, oldest first (they do not conflict with each other, so age decides); then the others, oldest
 * first, each naming the sessions before it that it conflicts with: they need rebasing or resolving once the clean
 * ones are in.
 */
export function suggestMergeOrder(sessions: readonly AgedSession[], predictions: { pairs: readonly PairOverlap[]; base: readonly BaseOverlap[] }): MergeOrderStep[] {
  const byAge = [...sessions].sort((x, y) => x.created_at - y.created_at || (x.session_id < y.session_id ? -1 : x.session_id > y.session_id ? 1 : 0)).map((s) => s.session_id);
  const rivals = new Map<string, Set<string>>(byAge.map((id) => [id, new Set<string>()]));
  for (const p of predictions.pairs) {
    if (!p.conflict) continue;
    rivals.get(p.a)?.add(p.b);
    rivals.get(p.b)?.add(p.a);
  }
  const baseConflicts = new Map<string, string[]>();
  for (const b of predictions.base) if (b.conflict) baseConflicts.set(b.session_id, b.conflicting_paths);
  const rivalsOf = (id: string) => rivals.get(id) as Set<string>;

  const taken = new Set<string>();
  let takeable = byAge.filter((id) => !baseConflicts.has(id));
  while (takeable.length > 0) {
    const shutOut = (id: string) => takeable.filter((other) => rivalsOf(id).has(other)).length;
    // byAge order makes the first of the fewest the oldest of them.
    const next = takeable.reduce((best, id) => (shutOut(id) < shutOut(best) ? id : best));
    taken.add(next);
    takeable = takeable.filter((id) => id !== next && !rivalsOf(next).has(id));
  }
  const order = [...byAge.filter((id) => taken.has(id)), ...byAge.filter((id) => !taken.has(id))];
  return order.map((id, i) => ({
    session_id: id,
    clean: taken.has(id),
    conflicts_with: order.slice(0, i).filter((before) => rivalsOf(id).has(before)),
    base_conflicts: baseConflicts.get(id) ?? [],
  }));
}
