import { Logger } from '@nestjs/common';
import { Subscription } from 'rxjs';
import { SerialQueue } from '../common/serial-queue';
import { Journal, JournalEvent } from '../journal/journal.port';
import { UsageTotals, dayOf, emptyTotals, roundUsd } from './usage.model';
import {
  DayRange,
  USAGE_EVENT_TYPES,
  UsageGroup,
  UsageRow,
  UsageState,
  dayTotals,
  emptyUsageState,
  foldUsage,
  profileDayTotals,
  sessionTotals,
  usageRows,
} from './usage.projection';

/** The name the projection's snapshot is kept under. */
export const USAGE_PROJECTION = 'usage';
/** Every this many usage events folded, the projection is snapshotted, so a boot folds only what came after. */
export const USAGE_SNAPSHOT_EVERY = 10_000;

/** Reports kept ready as JSON, each until the projection changes. */
const REPORTS_KEPT = 32;

export interface UsageReport {
  group_by: UsageGroup;
  since: string | null;
  until: string | null;
  rows: UsageRow[];
  total: UsageTotals & { tokens: number };
}

/** The rows summed. */
function totalOf(rows: readonly UsageRow[]): UsageTotals & { tokens: number } {
  const t = { ...emptyTotals(), tokens: 0 };
  for (const r of rows) {
    t.turns += r.turns;
    t.input_tokens += r.input_tokens;
    t.output_tokens += r.output_tokens;
    t.cache_read_tokens += r.cache_read_tokens;
    t.cache_write_tokens += r.cache_write_tokens;
    t.tokens += r.tokens;
    t.cost_usd += r.cost_usd;
    t.cost_estimated ||= r.cost_estimated;
  }
  return { ...t, cost_usd: roundUsd(t.cost_usd) };
}

/**
 * The usage projection, hosted: loaded from its snapshot and the journal after it, then kept up with every event the
 * journal commits (this node's and, on a shared journal, the others'). Queries read it; nothing here scans the journal
 * per request. Its clock says what "today" is for the day budgets.
 */
export class UsageService {
  private state: UsageState = emptyUsageState();
  private seq = 0;
  private folded = 0;
  private live = false;
  /** Bumped by every event folded that changes a report: a report kept as JSON is good while it has not moved. */
  private version = 0;
  private readonly kept = new Map<string, { version: number; json: Buffer }>();
  private sub: Subscription | null = null;
  private caughtUp: Promise<void> = Promise.resolve();
  private readonly saves = new SerialQueue();
  private readonly logger = new Logger('usage');

  constructor(
    private readonly journal: Journal,
    private readonly now: () => number,
    private readonly snapshotEvery = USAGE_SNAPSHOT_EVERY,
  ) {}

  /** Loads the snapshot and folds the journal after it; settles once it has caught up with the journal's head. */
  async start(): Promise<void> {
    const snap = await this.journal.loadProjection<UsageState>(USAGE_PROJECTION).catch((e: unknown) => {
      this.logger.warn(`usage snapshot not read, folding the whole journal: ${(e as Error).message}`);
      return null;
    });
    if (snap && snap.state?.format === 1) {
      this.state = snap.state;
      this.seq = snap.seq;
    }
    const head = this.journal.head().seq;
    let reached: () => void = () => undefined;
    this.caughtUp = head <= this.seq ? Promise.resolve() : new Promise<void>((resolve) => (reached = resolve));
    // While it catches up it is not snapshotted: once it has, if the catch-up was long, so a next boot need not repeat it.
    void this.caughtUp.then(() => {
      this.live = true;
      if (this.folded >= this.snapshotEvery) void this.save();
      this.folded = 0;
    });
    this.sub = this.journal.subscribe(this.seq).subscribe({
      next: (e) => {
        this.fold(e);
        if (e.seq >= head) reached();
      },
      error: (e: unknown) => this.logger.error(`usage projection stopped following the journal: ${(e as Error).message}`),
    });
    await this.caughtUp;
  }

  /** Stops following, and snapshots what it folded, so the next boot folds nothing it already has. */
  async stop(): Promise<void> {
    this.sub?.unsubscribe();
    this.sub = null;
    await this.save();
  }

  /** Settles once the projection has folded the journal as it was at start. */
  ready(): Promise<void> {
    return this.caughtUp;
  }

  report(group: UsageGroup, range: DayRange): UsageReport {
    const rows = usageRows(this.state, group, range);
    return { group_by: group, since: range.since, until: range.until, rows, total: totalOf(rows) };
  }

  /**
   * The report as JSON, encoded: made once after each change of the projection and kept (a report by session over
   * 10,000 sessions is megabytes; between two turns every read of it is the same, and is sent as it is).
   */
  reportJson(group: UsageGroup, range: DayRange): Buffer {
    const key = `${group} ${range.since} ${range.until}`;
    const kept = this.kept.get(key);
    if (kept && kept.version === this.version) return kept.json;
    const json = Buffer.from(JSON.stringify(this.report(group, range)), 'utf8');
    this.kept.delete(key);
    if (this.kept.size >= REPORTS_KEPT) this.kept.delete(this.kept.keys().next().value as string);
    this.kept.set(key, { version: this.version, json });
    return json;
  }

  session(id: string): UsageTotals {
    return sessionTotals(this.state, id);
  }

  /** What one conversation of the brain used so far (its runtime's id). */
  conversation(id: string): UsageTotals {
    return this.state.brain[id]?.totals ?? emptyTotals();
  }

  /** Today as the day budgets count it: the UTC date now. */
  today(): string {
    return dayOf(this.now());
  }

  /** What the sessions of a profile used today. */
  profileToday(profileId: string): UsageTotals {
    return profileDayTotals(this.state, profileId, this.today());
  }

  /** What the workers, the brain and both together used today. */
  allToday(): { workers: UsageTotals; brain: UsageTotals; all: UsageTotals } {
    return dayTotals(this.state, this.today());
  }

  private fold(e: JournalEvent): void {
    this.seq = e.seq;
    if (!USAGE_EVENT_TYPES.has(e.type)) return;
    foldUsage(this.state, e);
    this.version++;
    if (e.type === 'session.usage' || e.type === 'brain.usage') {
      if (++this.folded % this.snapshotEvery === 0 && this.live) void this.save();
    }
  }

  /** A copy taken now, as of the seq folded now: what is folded while it is written is not in it. */
  private save(): Promise<void> {
    if (this.seq === 0) return Promise.resolve();
    const snapshot = { seq: this.seq, state: structuredClone(this.state) };
    return this.saves
      .run(() => this.journal.saveProjection(USAGE_PROJECTION, snapshot))
      .catch((e: unknown) => this.logger.warn(`usage snapshot failed: ${(e as Error).message}`));
  }
}
