import { EventBus } from '../bus/event-bus';
import { DomainError } from '../common/domain-error';
import { SerialQueue } from '../common/serial-queue';
import { Journal } from '../journal/journal.port';
import { SessionDirectory } from '../supervision/session-directory.port';
import { findSession } from '../supervision/supervision-scope';
import { SupervisionService } from '../supervision/supervision.service';
import { WorkflowRun, onRunConverge, onRunStart } from './workflow-run';

export const WORKFLOWS_STREAM = 'workflows';
const runStream = (id: string) => `workflow-${id}`;

export interface WorkflowEventMap {
  'workflow.registered': { run_id: string };
  'workflow.started': { run: WorkflowRun };
  'workflow.converged': { run_id: string; supervision_closed: boolean };
}

export interface StartRunRequest {
  workflow_id: string;
  name?: string;
  auto_supervise?: boolean;
  session_ids?: string[];
}

/**
 * Tracks workflow runs (the pipeline engine that advances nodes is elsewhere) and applies the seed's
 * auto_supervise rule. Each run is stream workflow-<id>; the `workflows` stream indexes them for boot.
 */
export class WorkflowsService {
  private readonly runs = new Map<string, WorkflowRun>();
  private readonly queue = new SerialQueue();

  constructor(
    private readonly bus: EventBus,
    private readonly journal: Journal,
    private readonly supervision: SupervisionService,
    private readonly sessions: SessionDirectory,
    private readonly now: () => number,
    private readonly newId: () => string,
  ) {}

  async start(): Promise<void> {
    for (const e of await this.journal.readStream(WORKFLOWS_STREAM)) {
      const id = (e.data as WorkflowEventMap['workflow.registered']).run_id;
      for (const r of await this.journal.readStream(runStream(id))) this.applyEvent(r.type, r.data, r.at);
    }
  }

  list(): WorkflowRun[] {
    return [...this.runs.values()].reverse();
  }

  get(id: string): WorkflowRun {
    const run = this.runs.get(id);
    if (!run) throw new DomainError('not_found', `no workflow run ${JSON.stringify(id)}`);
    return run;
  }

  startRun(req: StartRunRequest, actor: string): Promise<WorkflowRun> {
    return this.queue.run(async () => {
      const sessionIds = this.sessionIds(req.session_ids ?? []);
      const auto = req.auto_supervise ?? true;
      const decision = onRunStart(auto, this.supervisionFacts());
      const run: WorkflowRun = {
        id: `wr_${this.newId()}`,
        workflow_id: req.workflow_id,
        name: req.name ?? req.workflow_id,
        status: 'running',
        auto_supervise: auto,
        supervision_started_by_run: decision.enable,
        holds_supervision: decision.holds,
        session_ids: sessionIds,
        started_at: new Date(this.now()).toISOString(),
        converged_at: null,
      };
      await this.emit(run.id, 'workflow.started', { run });
      await this.bus.emit(WORKFLOWS_STREAM, [{ type: 'workflow.registered', data: { run_id: run.id } } as never]);
      if (decision.enable) await this.supervision.enable({ task_hint: `workflow ${run.name}` }, 'workflow', actor);
      return this.get(run.id);
    });
  }

  convergeRun(id: string): Promise<WorkflowRun> {
    return this.queue.run(async () => {
      const run = this.get(id);
      if (run.status === 'converged') throw new DomainError('conflict', `workflow run ${id} has already converged`);
      const others = [...this.runs.values()].filter((r) => r.id !== id && r.status === 'running' && r.holds_supervision).length;
      const { disable } = onRunConverge(run, others, this.supervisionFacts());
      await this.emit(id, 'workflow.converged', { run_id: id, supervision_closed: disable });
      if (disable) await this.supervision.disable('workflow_converged');
      return this.get(id);
    });
  }

  /** The run's sessions as cs_ ids (aliases resolved, each once); a run must not record sessions that do not exist. */
  private sessionIds(refs: readonly string[]): string[] {
    const known = this.sessions.list();
    const unknown = refs.filter((ref) => !findSession(known, ref));
    if (unknown.length) throw new DomainError('invalid_input', `session_ids: no session ${unknown.map((r) => JSON.stringify(r)).join(', ')}`);
    return [...new Set(refs.map((ref) => findSession(known, ref)!.id))];
  }

  private supervisionFacts() {
    const a = this.supervision.status().autonomous;
    return { enabled: a?.enabled ?? false, started_by: a?.started_by ?? null };
  }

  private async emit<K extends 'workflow.started' | 'workflow.converged'>(id: string, type: K, data: WorkflowEventMap[K]): Promise<void> {
    const { events } = await this.bus.emit(runStream(id), [{ type, data } as never]);
    this.applyEvent(type, data, events[0].at);
  }

  private applyEvent(type: string, data: unknown, at: string): void {
    if (type === 'workflow.started') {
      const { run } = data as WorkflowEventMap['workflow.started'];
      this.runs.set(run.id, { ...run });
    } else if (type === 'workflow.converged') {
      const run = this.runs.get((data as WorkflowEventMap['workflow.converged']).run_id);
      if (run) {
        run.status = 'converged';
        run.converged_at = at;
      }
    }
  }
}
