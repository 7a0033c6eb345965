import { Logger } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { PageRequest, pageOf } from '../common/page';
import { pastRetention } from '../common/retention-queue';
import { RetentionSweeper } from '../common/retention-sweeper';
import { SerialQueue } from '../common/serial-queue';
import { CommandStream, handleCommand } from '../journal/command-handler';
import { Journal, JournalEvent } from '../journal/journal.port';
import { SessionDirectory } from '../supervision/session-directory.port';
import { SupervisionService } from '../supervision/supervision.service';
import { WorkflowCommand, decide, evolve as evolveRun } from './workflow.decider';
import { WorkflowEventMap } from './workflow.events';
import { WorkflowRun } from './workflow-run';

export const WORKFLOWS_STREAM = 'workflows';
const runStream = (id: string) => `workflow-${id}`;

/** Every this many runs registered, the index of runs in memory is snapshotted: boot reads only the tail after it. */
export const INDEX_SNAPSHOT_EVERY = 64;

/** The snapshot of stream `workflows`: the runs in memory, each with the seq of its workflow.started (its place in the list). */
interface WorkflowIndex {
  runs: Array<{ seq: number; run: WorkflowRun }>;
}

export interface StartRunRequest {
  workflow_id: string;
  name?: string;
  auto_supervise?: boolean;
  session_ids?: string[];
}

/**
 * Tracks workflow runs (the pipeline engine that advances nodes is elsewhere); their rules, auto_supervise (docs/architecture/decisions.md#workflow-runs-and-auto_supervise)
 * among them, are workflow.decider.ts. Each run is stream workflow-<id>; the `workflows` stream registers them, and its snapshot
 * indexes the runs in memory, so boot reads those and the ones registered after it. A converged run leaves memory
 * once its retention has passed (the journal keeps it); a running one keeps the sessions it names in memory.
 */
export class WorkflowsService {
  private readonly runs = new Map<string, WorkflowRun>();
  /** Each run's seq of workflow.started: the list's order, and what its cursor names. */
  private readonly runSeqs = new Map<string, number>();
  /** Each run's stream version: commands on it append at that version. */
  private readonly runVersions = new Map<string, number>();
  private readonly queue = new SerialQueue();
  private readonly retention: RetentionSweeper;
  private readonly logger = new Logger('workflows');
  private indexVersion = 0;
  private indexSaved = 0;
  private indexWrites: Promise<void> = Promise.resolve();
  private markLoaded: () => void = () => undefined;
  private unfollow: (() => void) | null = null;

  constructor(
    private readonly journal: Journal,
    private readonly supervision: SupervisionService,
    private readonly sessions: SessionDirectory,
    private readonly now: () => number,
    private readonly newId: () => string,
    /** How long a converged run stays in memory; absent keeps every run. */
    private readonly retentionS?: number,
  ) {
    const retentionMs = retentionS === undefined ? Infinity : retentionS * 1000;
    this.retention = new RetentionSweeper(
      retentionMs,
      now,
      (ids) => {
        for (const id of ids) {
          this.runs.delete(id);
          this.runSeqs.delete(id);
          this.runVersions.delete(id);
        }
        return [];
      },
      () => this.saveIndex(),
    );
    const loaded = new Promise<void>((resolve) => (this.markLoaded = resolve));
    sessions.holdWhile({ holds: (id) => this.holds(id), loaded });
  }

  async start(): Promise<void> {
    // Followed from before the reads, so a run another node starts meanwhile is either read or applied after.
    let early: JournalEvent[] | null = [];
    this.unfollow = this.journal.follow((e) => (early ? early.push(e) : this.followEvent(e)));
    try {
      const index = await this.journal.loadSnapshot<WorkflowIndex>(WORKFLOWS_STREAM);
      this.indexVersion = this.indexSaved = index?.version ?? 0;
      const now = this.now();
      const reread: string[] = [];
      for (const { seq, run } of index?.state.runs ?? []) {
        if (run.converged_at !== null && pastRetention(Date.parse(run.converged_at), this.retention.queue.retentionMs, now)) continue;
        this.runs.set(run.id, run);
        this.runSeqs.set(run.id, seq);
        // It may have converged after the snapshot.
        if (run.status === 'running') reread.push(run.id);
      }
      for (const e of await this.journal.readStream(WORKFLOWS_STREAM, this.indexVersion + 1)) {
        this.indexVersion = e.version;
        reread.push((e.data as WorkflowEventMap['workflow.registered']).run_id);
      }
      for (const id of reread) for (const r of await this.journal.readStream(runStream(id))) this.applyEvent(r);
      const followed = early;
      early = null;
      for (const e of followed) this.followEvent(e);
      const converged = [...this.runs.values()].filter((r) => r.converged_at !== null);
      converged.sort((a, b) => Date.parse(a.converged_at as string) - Date.parse(b.converged_at as string));
      for (const r of converged) this.retention.ended(r.id, Date.parse(r.converged_at as string));
      this.retention.start();
      this.saveIndex();
      await this.indexWrites;
    } finally {
      this.markLoaded();
    }
  }

  /** Stops the retention timer and snapshots the index, so the next boot reads no tail. */
  close(): Promise<void> {
    this.unfollow?.();
    this.retention.stop();
    return this.queue.run(() => {
      this.saveIndex();
      return this.indexWrites;
    });
  }

  /** A page of the runs in memory, newest first. */
  list(req: PageRequest = {}): { runs: WorkflowRun[]; next_cursor: string | null } {
    const page = pageOf(this.runs.values(), (r) => this.runSeqs.get(r.id) ?? 0, 'workflow-runs', 'descending', req);
    return { runs: page.items, next_cursor: page.next_cursor };
  }

  get(id: string): WorkflowRun {
    const run = this.runs.get(id);
    if (!run) {
      const why =
        this.retentionS === undefined ? '' : ` (converged runs leave memory ${this.retentionS} s after they converge, BRAINSTEM_RETENTION_S; the journal keeps them, stream workflow-<id>)`;
      throw new DomainError('run_not_found', `no workflow run ${JSON.stringify(id)}${why}`);
    }
    return run;
  }

  /** Whether a running run names the session: the pipeline may still ask for it. */
  private holds(sessionId: string): boolean {
    for (const r of this.runs.values()) if (r.status === 'running' && r.session_ids.includes(sessionId)) return true;
    return false;
  }

  startRun(req: StartRunRequest, actor: string): Promise<WorkflowRun> {
    return this.queue.run(async () => {
      const id = `wr_${this.newId()}`;
      const cmd: WorkflowCommand = {
        type: 'start_run',
        run_id: id,
        workflow_id: req.workflow_id,
        name: req.name,
        auto_supervise: req.auto_supervise,
        session_refs: req.session_ids ?? [],
        sessions: this.sessions.list(),
        supervision: this.supervisionFacts(),
        now: this.now(),
      };
      // The run and its registration in the index are one atomic append: no run the index does not name, nor the reverse.
      const { state: run } = await handleCommand(this.journal, this.runStream(id), (r) => decide(cmd, r), evolveRun, {
        alongside: () => [
          {
            stream: WORKFLOWS_STREAM,
            expectedVersion: this.indexVersion,
            events: [{ type: 'workflow.registered', data: { run_id: id } }],
            apply: (res) => (this.indexVersion = res.version),
          },
        ],
      });
      if (this.indexVersion - this.indexSaved >= INDEX_SNAPSHOT_EVERY) this.saveIndex();
      if (run?.supervision_started_by_run) await this.supervision.enable({ task_hint: `workflow ${run.name}` }, 'workflow', actor);
      return this.get(id);
    });
  }

  convergeRun(id: string): Promise<WorkflowRun> {
    return this.queue.run(async () => {
      // Loaded first: an unknown run is answered with where runs go once converged.
      this.get(id);
      const others = [...this.runs.values()].filter((r) => r.id !== id && r.status === 'running' && r.holds_supervision).length;
      const cmd: WorkflowCommand = { type: 'converge_run', run_id: id, other_holders: others, supervision: this.supervisionFacts() };
      const { events } = await handleCommand(this.journal, this.runStream(id), (r) => decide(cmd, r), evolveRun);
      const run = this.get(id);
      this.retention.ended(id, Date.parse(run.converged_at as string));
      if (events.some((e) => e.type === 'workflow.converged' && e.data.supervision_closed)) await this.supervision.disable('workflow_converged');
      return run;
    });
  }

  private supervisionFacts() {
    const a = this.supervision.status().autonomous;
    return { enabled: a?.enabled ?? false, started_by: a?.started_by ?? null };
  }

  /** A run's stream as the command path reads and writes it. */
  private runStream(id: string): CommandStream<WorkflowRun | null> {
    return {
      name: runStream(id),
      current: () => ({ state: this.runs.get(id) ?? null, version: this.runVersions.get(id) ?? 0 }),
      adopt: (_run, _version, stored) => stored.forEach((e) => this.applyEvent(e)),
    };
  }

  /** An event another node appended: the index's version, or a run's next event (a run this node holds, or a new one). */
  private followEvent(e: JournalEvent): void {
    if (e.stream === WORKFLOWS_STREAM) {
      this.indexVersion = Math.max(this.indexVersion, e.version);
      return;
    }
    if (!e.stream.startsWith('workflow-')) return;
    const id = e.stream.slice('workflow-'.length);
    if (e.version !== (this.runVersions.get(id) ?? 0) + 1) return;
    this.applyEvent(e);
    const run = this.runs.get(id);
    if (run?.converged_at) this.retention.ended(id, Date.parse(run.converged_at));
  }

  private applyEvent(e: JournalEvent): void {
    const id = e.stream.slice('workflow-'.length);
    // A run that left memory (retention) stays out of it.
    const run = evolveRun(this.runs.get(id) ?? null, e);
    if (!run) return;
    this.runs.set(id, run);
    this.runVersions.set(id, e.version);
    if (e.type === 'workflow.started') this.runSeqs.set(id, e.seq);
  }

  /** Snapshots the index at the version seen, in order after the writes before it. It only spares boot reads. */
  private saveIndex(): void {
    if (this.indexVersion === 0) return;
    const version = this.indexVersion;
    const state: WorkflowIndex = { runs: [...this.runs.values()].map((run) => ({ seq: this.runSeqs.get(run.id) ?? 0, run: { ...run } })) };
    this.indexSaved = version;
    this.indexWrites = this.indexWrites
      .then(() => this.journal.saveSnapshot(WORKFLOWS_STREAM, { version, state }))
      .catch((e: unknown) => this.logger.warn(`index snapshot failed: ${(e as Error).message}`));
  }
}
