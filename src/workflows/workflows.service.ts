import { Logger } from '@nestjs/common';
import { EventBus } from '../bus/event-bus';
import { DomainError } from '../common/domain-error';
import { PageRequest, pageOf } from '../common/page';
import { pastRetention } from '../common/retention-queue';
import { RetentionSweeper } from '../common/retention-sweeper';
import { SerialQueue } from '../common/serial-queue';
import { Journal } from '../journal/journal.port';
import { SessionDirectory } from '../supervision/session-directory.port';
import { SupervisionService } from '../supervision/supervision.service';
import { WorkflowCommand, WorkflowRunEvent, decide, evolve } from './workflow.decider';
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
 * Tracks workflow runs (the pipeline engine that advances nodes is elsewhere); their rules, the seed's auto_supervise
 * among them, are workflow.decider.ts. Each run is stream workflow-<id>; the `workflows` stream registers them, and its snapshot
 * indexes the runs in memory, so boot reads those and the ones registered after it. A converged run leaves memory
 * once its retention has passed (the journal keeps it); a running one keeps the sessions it names in memory.
 */
export class WorkflowsService {
  private readonly runs = new Map<string, WorkflowRun>();
  /** Each run's seq of workflow.started: the list's order, and what its cursor names. */
  private readonly runSeqs = new Map<string, number>();
  private readonly queue = new SerialQueue();
  private readonly retention: RetentionSweeper;
  private readonly logger = new Logger('workflows');
  private indexVersion = 0;
  private indexSaved = 0;
  private indexWrites: Promise<void> = Promise.resolve();
  private markLoaded: () => void = () => undefined;

  constructor(
    private readonly bus: EventBus,
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
        }
        return [];
      },
      () => this.saveIndex(),
    );
    const loaded = new Promise<void>((resolve) => (this.markLoaded = resolve));
    sessions.holdWhile({ holds: (id) => this.holds(id), loaded });
  }

  async start(): Promise<void> {
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
      for (const id of reread) for (const r of await this.journal.readStream(runStream(id))) this.applyEvent(r.type, r.data, r.at, r.seq);
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
      const { run } = await this.execute(id, {
        type: 'start_run',
        run_id: id,
        workflow_id: req.workflow_id,
        name: req.name,
        auto_supervise: req.auto_supervise,
        session_refs: req.session_ids ?? [],
        sessions: this.sessions.list(),
        supervision: this.supervisionFacts(),
        now: this.now(),
      });
      await this.bus.emit(WORKFLOWS_STREAM, [{ type: 'workflow.registered', data: { run_id: run.id } } as never], { apply: (res) => (this.indexVersion = res.version) });
      if (this.indexVersion - this.indexSaved >= INDEX_SNAPSHOT_EVERY) this.saveIndex();
      if (run.supervision_started_by_run) await this.supervision.enable({ task_hint: `workflow ${run.name}` }, 'workflow', actor);
      return this.get(run.id);
    });
  }

  convergeRun(id: string): Promise<WorkflowRun> {
    return this.queue.run(async () => {
      // Loaded first: an unknown run is answered with where runs go once converged.
      this.get(id);
      const others = [...this.runs.values()].filter((r) => r.id !== id && r.status === 'running' && r.holds_supervision).length;
      const { run, events } = await this.execute(id, { type: 'converge_run', run_id: id, other_holders: others, supervision: this.supervisionFacts() });
      this.retention.ended(id, Date.parse(run.converged_at as string));
      if (events.some((e) => e.type === 'workflow.converged' && e.data.supervision_closed)) await this.supervision.disable('workflow_converged');
      return run;
    });
  }

  private supervisionFacts() {
    const a = this.supervision.status().autonomous;
    return { enabled: a?.enabled ?? false, started_by: a?.started_by ?? null };
  }

  /** decide → append → fold (before the events are published), on the run's stream; a refusal is thrown. Answers the run and the events journaled. */
  private async execute(id: string, cmd: WorkflowCommand): Promise<{ run: WorkflowRun; events: WorkflowRunEvent[] }> {
    const d = decide(cmd, this.runs.get(id) ?? null);
    if (d.error) throw new DomainError(d.error.code, d.error.message);
    await this.bus.emit(runStream(id), d.events as never, { apply: ({ events }) => events.forEach((e) => this.applyEvent(e.type, e.data, e.at, e.seq)) });
    return { run: this.get(id), events: d.events };
  }

  private applyEvent(type: string, data: unknown, at: string, seq: number): void {
    const id = type === 'workflow.started' ? (data as WorkflowEventMap['workflow.started']).run.id : (data as WorkflowEventMap['workflow.converged']).run_id;
    // A run that left memory (retention) stays out of it.
    const run = evolve(this.runs.get(id) ?? null, { type, data, at });
    if (!run) return;
    this.runs.set(id, run);
    if (type === 'workflow.started') this.runSeqs.set(id, seq);
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
