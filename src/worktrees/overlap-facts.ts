import type { OverlapReport } from './worktree-overlaps.service';

/**
 * What is journaled of predicted collisions (docs/guide/worktrees.md#overlaps-and-predicted-conflicts), pure: a fact
 * only when the answer for a pair changes, so the journal says since when each overlap or predicted conflict holds.
 * `b` is the other session, or `base` for the session against its base branch as it is now.
 */
export interface OverlapEventMap {
  /** Both changed these files, and merging both goes through. */
  'worktree.overlap': { repo: string; session_id: string; b: string; files: string[] };
  /** Merging both (or the session into its base) would stop on conflicts in conflicting_paths. */
  'worktree.conflict_predicted': { repo: string; session_id: string; b: string; files: string[]; conflicting_paths: string[] };
  /** They no longer overlap: one changed course, was merged or exited. */
  'worktree.overlap_cleared': { repo: string; session_id: string; b: string };
}

declare module '../bus/domain-event' {
  interface DomainEventMap extends OverlapEventMap {}
}

export type OverlapFact = { [K in keyof OverlapEventMap]: { type: K; data: OverlapEventMap[K] } }[keyof OverlapEventMap];

/** One pair's standing, as its last fact left it. */
export interface PairStanding {
  repo: string;
  session_id: string;
  b: string;
  conflict: boolean;
  files: string[];
  conflicting_paths: string[];
}

/** The pairs that overlap now, by `repo a b`. */
export type OverlapState = ReadonlyMap<string, PairStanding>;

const keyOf = (p: { repo: string; session_id: string; b: string }): string => JSON.stringify([p.repo, p.session_id, p.b]);

export function evolveOverlaps(state: OverlapState, fact: OverlapFact): OverlapState {
  const next = new Map(state);
  if (fact.type === 'worktree.overlap_cleared') {
    next.delete(keyOf(fact.data));
  } else if (fact.type === 'worktree.overlap') {
    const d = fact.data;
    next.set(keyOf(d), { repo: d.repo, session_id: d.session_id, b: d.b, conflict: false, files: d.files, conflicting_paths: [] });
  } else {
    const d = fact.data;
    next.set(keyOf(d), { repo: d.repo, session_id: d.session_id, b: d.b, conflict: true, files: d.files, conflicting_paths: d.conflicting_paths });
  }
  return next;
}

const same = (x: readonly string[], y: readonly string[]): boolean => x.length === y.length && x.every((v, i) => v === y[i]);

/**
 * The facts that bring the repository's pairs in `state` to what `report` says (null: it has no live worktree session
 * left here): each pair that changed its answer, and each that no longer overlaps cleared.
 */
export function overlapFacts(state: OverlapState, repo: string, report: Pick<OverlapReport, 'pairs' | 'base'> | null): OverlapFact[] {
  const now: PairStanding[] = [];
  for (const p of report?.pairs ?? []) {
    if (p.files.length > 0 || p.conflict) now.push({ repo, session_id: p.a, b: p.b, conflict: p.conflict, files: p.files, conflicting_paths: p.conflicting_paths });
  }
  for (const x of report?.base ?? []) {
    if (x.conflict) now.push({ repo, session_id: x.session_id, b: 'base', conflict: true, files: x.conflicting_paths, conflicting_paths: x.conflicting_paths });
  }
  const facts: OverlapFact[] = [];
  const seen = new Set<string>();
  for (const p of now) {
    const key = keyOf(p);
    seen.add(key);
    const was = state.get(key);
    if (was && was.conflict === p.conflict && same(was.files, p.files) && same(was.conflicting_paths, p.conflicting_paths)) continue;
    facts.push(
      p.conflict
        ? { type: 'worktree.conflict_predicted', data: { repo, session_id: p.session_id, b: p.b, files: p.files, conflicting_paths: p.conflicting_paths } }
        : { type: 'worktree.overlap', data: { repo, session_id: p.session_id, b: p.b, files: p.files } },
    );
  }
  for (const [key, p] of state) if (p.repo === repo && !seen.has(key)) facts.push({ type: 'worktree.overlap_cleared', data: { repo, session_id: p.session_id, b: p.b } });
  return facts;
}
