import { Decision } from '../journal/command-handler';
import { findSession } from '../supervision/supervision-scope';
import { WorkflowErrorCode } from './workflow.errors';
import { WorkflowEventMap } from './workflow.events';
import { SupervisionFacts, WorkflowRun, onRunConverge, onRunStart } from './workflow-run';

/**
 * A workflow run's rules, pure (stream workflow-<id>): decide() judges a command against the run (null before it
 * started) and answers the events to journal or why it is refused; evolve() folds a journaled event into the run.
 * The service loads what a command needs (the sessions, supervision's state, the other runs), decides, appends,
 * then turns supervision on or off as the events say.
 */

export type WorkflowRunEvent = { [K in 'workflow.started' | 'workflow.converged']: { type: K; data: WorkflowEventMap[K] } }['workflow.started' | 'workflow.converged'];

export type WorkflowCommand =
  | {
      type: 'start_run';
      run_id: string;
      workflow_id: string;
      name?: string;
      auto_supervise?: boolean;
      /** The sessions the run names, as cs_ ids or aliases. */
      session_refs: readonly string[];
      /** The sessions there are. */
      sessions: ReadonlyArray<{ id: string; alias: string }>;
      supervision: SupervisionFacts;
      now: number;
    }
  | {
      type: 'converge_run';
      run_id: string;
      /** How many other running runs hold supervision. */
      other_holders: number;
      supervision: SupervisionFacts;
    };

export interface WorkflowRefusal {
  code: WorkflowErrorCode;
  message: string;
}

export type WorkflowDecision = Decision<WorkflowRunEvent>;

const refuse = (code: WorkflowErrorCode, message: string): WorkflowDecision => ({ events: [], error: { code, message } });

export function decide(cmd: WorkflowCommand, run: WorkflowRun | null): WorkflowDecision {
  if (cmd.type === 'start_run') {
    if (run) return refuse('run_already_started', `workflow run ${cmd.run_id} exists already`);
    // A run must not record sessions that do not exist; each is recorded once, by its cs_ id.
    const unknown = cmd.session_refs.filter((ref) => !findSession(cmd.sessions, ref));
    if (unknown.length) return refuse('run_session_unknown', `session_ids: no session ${unknown.map((r) => JSON.stringify(r)).join(', ')}`);
    const auto = cmd.auto_supervise ?? true;
    const decision = onRunStart(auto, cmd.supervision);
    const started: WorkflowRun = {
      id: cmd.run_id,
      workflow_id: cmd.workflow_id,
      name: cmd.name ?? cmd.workflow_id,
      status: 'running',
      auto_supervise: auto,
      supervision_started_by_run: decision.enable,
      holds_supervision: decision.holds,
      session_ids: [...new Set(cmd.session_refs.map((ref) => findSession(cmd.sessions, ref)!.id))],
      started_at: new Date(cmd.now).toISOString(),
      converged_at: null,
    };
    return { events: [{ type: 'workflow.started', data: { run: started } }] };
  }
  if (!run) return refuse('run_not_found', `no workflow run ${JSON.stringify(cmd.run_id)}`);
  if (run.status === 'converged') return refuse('run_already_converged', `workflow run ${run.id} has already converged`);
  const { disable } = onRunConverge(run, cmd.other_holders, cmd.supervision);
  return { events: [{ type: 'workflow.converged', data: { run_id: run.id, supervision_closed: disable } }] };
}

/** Folds one journaled event (`at`: when it was journaled, ISO) into the run. */
export function evolve(run: WorkflowRun | null, e: { type: string; data: unknown; at: string }): WorkflowRun | null {
  if (e.type === 'workflow.started') return { ...(e.data as WorkflowEventMap['workflow.started']).run };
  if (e.type === 'workflow.converged' && run) return { ...run, status: 'converged', converged_at: e.at };
  return run;
}
