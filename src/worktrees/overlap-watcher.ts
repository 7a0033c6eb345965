import { Logger } from '@nestjs/common';
import { Observable, Subscription } from 'rxjs';
import { DomainError } from '../common/domain-error';
import { Journal, JournalEvent } from '../journal/journal.port';
import { OverlapFact, OverlapState, evolveOverlaps, overlapFacts } from './overlap-facts';
import { OverlapReport } from './worktree-overlaps.service';

/** What the watcher needs of the overlaps: the repositories with live worktree sessions here, and one's report. */
export interface OverlapSource {
  repos(): string[];
  overlaps(repo: string): Promise<OverlapReport>;
  /** Whether a worktree session's worker works now (the periodic look runs only then). */
  working(): boolean;
}

export interface OverlapWatcherSettings {
  /** Turn ends and merges in this window are one look. */
  debounce_ms: number;
  /** At least this often while a worktree worker works; 0: only after turn ends and merges. */
  interval_ms: number;
}

/** Facts after which the work of a worktree session, or its base, may have changed. */
const LOOK_AGAIN: ReadonlySet<string> = new Set(['session.turn_ended', 'session.worktree_merged', 'session.exited', 'session.worktree_prepared', 'session.worktree_removed']);

const reasonOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * Keeps the journal's predicted collisions (overlap-facts.ts) up to date for this node's worktree sessions: a look at
 * every repository after a turn ends or a branch is merged (debounced), and at least every interval while a worker
 * works; a fact only when a pair's answer changed. Each node journals its own sessions' pairs on a stream of its own
 * (`worktree-overlaps-<node>`), so nodes never race for one stream; the owner of both sides is the one that can see
 * both worktrees. The state is the stream's fold, read at start.
 */
export class OverlapWatcher {
  private readonly logger = new Logger('worktrees');
  private state: OverlapState = new Map();
  private version = 0;
  private sub: Subscription | null = null;
  private debounce: NodeJS.Timeout | null = null;
  private interval: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly journal: Journal,
    private readonly events$: Observable<{ type: string; stream: string }>,
    private readonly source: OverlapSource,
    readonly stream: string,
    private readonly settings: OverlapWatcherSettings,
  ) {}

  async start(): Promise<void> {
    for (const e of await this.journal.readStream(this.stream)) this.fold(e);
    this.sub = this.events$.subscribe((e) => {
      if (LOOK_AGAIN.has(e.type)) this.soon();
    });
    if (this.settings.interval_ms > 0) {
      this.interval = setInterval(() => {
        if (this.source.working()) this.soon();
      }, this.settings.interval_ms);
      this.interval.unref();
    }
    this.soon();
  }

  stop(): void {
    this.sub?.unsubscribe();
    if (this.debounce) clearTimeout(this.debounce);
    if (this.interval) clearInterval(this.interval);
    this.sub = this.debounce = this.interval = null;
  }

  /** The pairs that overlap now, as journaled. */
  current(): OverlapState {
    return this.state;
  }

  /** One look at every repository now, after the one running (a spec, or the debounce's end). */
  look(): Promise<void> {
    this.running = this.running.then(() => this.lookOnce()).catch((e: unknown) => this.logger.error(`overlaps could not be predicted: ${reasonOf(e)}`));
    return this.running;
  }

  private soon(): void {
    if (this.debounce || !this.sub) return;
    this.debounce = setTimeout(() => {
      this.debounce = null;
      void this.look();
    }, this.settings.debounce_ms);
    this.debounce.unref();
  }

  private async lookOnce(): Promise<void> {
    const repos = new Set([...this.source.repos(), ...[...this.state.values()].map((p) => p.repo)]);
    const facts: OverlapFact[] = [];
    for (const repo of [...repos].sort()) {
      const report = await this.source.overlaps(repo).catch((e: unknown) => {
        // No live worktree session of it is left here: every pair of it is cleared.
        if (e instanceof DomainError && e.code === 'no_worktree_sessions') return null;
        throw e;
      });
      facts.push(...overlapFacts(this.state, repo, report));
    }
    if (facts.length === 0) return;
    const version = this.version;
    await this.journal.append(this.stream, facts, { expectedVersion: version === 0 ? 'no_stream' : version });
    // Folded from what was stored (the bus publishes it too; the fold is this watcher's own).
    for (const e of await this.journal.readStream(this.stream, version + 1)) this.fold(e);
  }

  private fold(e: JournalEvent): void {
    this.state = evolveOverlaps(this.state, { type: e.type, data: e.data } as OverlapFact);
    this.version = e.version;
  }
}
