import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { realpath } from 'node:fs/promises';
import { DomainError } from '../common/domain-error';
import { Limiter } from '../common/limiter';
import { BaseOverlap, MergeOrderStep, OverlapCache, PairOverlap, baseOverlaps, pairOverlaps, suggestMergeOrder } from './worktree-overlap';
import { OverlapGit, OverlapSession, WorktreeSnapshot } from './worktree-overlap.port';

/** Merge predictions kept: a few hundred sessions' pairs and bases. */
const CACHED_PREDICTIONS = 10_000;

/** GET /worktrees/overlaps: the live worktree sessions of one repository, what each changed, and what would collide. */
export interface OverlapReport {
  repo: string;
  sessions: Array<{ session_id: string; alias: string; branch: string; files: string[] }>;
  pairs: PairOverlap[];
  base: BaseOverlap[];
  computed_at: string;
}

/** The brain's suggest_merge_order for one repository: each step with the session's alias and branch. */
export interface MergeOrder {
  repo: string;
  order: Array<MergeOrderStep & { alias: string; branch: string }>;
  computed_at: string;
}

type Snapshotted = OverlapSession & WorktreeSnapshot;

/**
 * Collisions between the live worktree sessions of a repository, predicted before any merge: each session's work
 * snapshotted as it is now (committed or not), the files each pair both changed and whether merging them would
 * conflict (git's merge-tree), and each against its base branch as it is now. `sessions` lists the worktree sessions
 * this node owns whose work may still be merged (the adapter decides which: their worktree is on this disk). Git runs a
 * few processes at a time, across every request; a pair unchanged since it was last asked is not asked of git again.
 */
export class WorktreeOverlaps {
  private readonly cache = new OverlapCache(CACHED_PREDICTIONS);
  private readonly limiter: Limiter;

  constructor(
    private readonly sessions: () => readonly OverlapSession[],
    private readonly git: OverlapGit,
    private readonly now: () => number = Date.now,
    gitAtOnce: number = availableParallelism(),
  ) {
    this.limiter = new Limiter(Math.max(1, gitAtOnce));
  }

  /** The repositories (main checkouts) with live worktree sessions here, sorted. */
  repos(): string[] {
    return [...new Set(this.sessions().map((s) => s.repo))].sort();
  }

  /** The report of the repository whose main checkout is `repo` (an absolute path): 404 no_worktree_sessions without one. */
  async overlaps(repo: string): Promise<OverlapReport> {
    return (await this.compute(await this.repoOf(repo))).report;
  }

  /** Every repository's report (none when no worktree session is live here). */
  async allOverlaps(): Promise<OverlapReport[]> {
    return Promise.all(this.repos().map(async (repo) => (await this.compute(repo)).report));
  }

  /** The merge order of one repository (404 no_worktree_sessions without one), or of each with live worktree sessions. */
  async mergeOrders(repo?: string): Promise<MergeOrder[]> {
    const repos = repo === undefined ? this.repos() : [await this.repoOf(repo)];
    return Promise.all(
      repos.map(async (r) => {
        const { report, snapshots } = await this.compute(r);
        const order = suggestMergeOrder(snapshots, report).map((step) => {
          const s = snapshots.find((x) => x.session_id === step.session_id) as Snapshotted;
          return { ...step, alias: s.alias, branch: s.branch };
        });
        return { repo: report.repo, order, computed_at: report.computed_at };
      }),
    );
  }

  /**
   * The repository as its sessions name it: the path as given (normalized), else where it really is (a symlink to
   * it). The path only ever selects sessions: git never runs in it.
   */
  private async repoOf(repo: string): Promise<string> {
    const known = new Set(this.repos());
    const given = resolve(repo);
    if (known.has(given)) return given;
    const real = await realpath(given).catch(() => null);
    if (real !== null && known.has(real)) return real;
    throw new DomainError('no_worktree_sessions', `no live worktree session of the repository ${given} runs on this node`, { repo: given });
  }

  /**
   * The repository's sessions, oldest first, each snapshotted (one whose folder is gone, deleted by hand, is left out),
   * then every pair of them and each against its base.
   */
  private async compute(repo: string): Promise<{ report: OverlapReport; snapshots: Snapshotted[] }> {
    const sessions = this.sessions()
      .filter((s) => s.repo === repo)
      .sort((a, b) => a.created_at - b.created_at || (a.session_id < b.session_id ? -1 : 1));
    const taken = await Promise.all(
      sessions.map((s) =>
        this.limiter.run(async (): Promise<Snapshotted | null> => {
          if (!(await this.git.exists(s.path))) return null;
          return { ...s, ...(await this.git.snapshot(s)) };
        }),
      ),
    );
    const snapshots = taken.filter((s): s is Snapshotted => s !== null);
    const merge = (a: string, b: string) => this.limiter.run(() => this.git.predictMerge(repo, a, b));
    const [pairs, base] = await Promise.all([
      pairOverlaps(snapshots, this.cache, (a, b) => merge(a.commit, b.commit)),
      baseOverlaps(snapshots, this.cache, (s, tip) => merge(s.commit, tip)),
    ]);
    const report = {
      repo,
      sessions: snapshots.map((s) => ({ session_id: s.session_id, alias: s.alias, branch: s.branch, files: s.files })),
      pairs,
      base,
      computed_at: new Date(this.now()).toISOString(),
    };
    return { report, snapshots };
  }
}
