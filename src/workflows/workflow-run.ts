import { StartedBy } from '../supervision/supervision.machine';

export type RunStatus = 'running' | 'converged';

export interface WorkflowRun {
  id: string;
  workflow_id: string;
  name: string;
  status: RunStatus;
  auto_supervise: boolean;
  /** This run turned supervision on. */
  supervision_started_by_run: boolean;
  /** This run keeps workflow-started supervision open until it converges. */
  holds_supervision: boolean;
  session_ids: string[];
  started_at: string;
  converged_at: string | null;
}

export interface SupervisionFacts {
  enabled: boolean;
  started_by: StartedBy | null;
}

/**
 * Seed (Workflow field): a run with auto_supervise turns supervision on if it is off. Supervision that
 * a workflow turned on is held by every running auto_supervise run; supervision the user turned on is
 * reused and never held.
 */
export function onRunStart(autoSupervise: boolean, s: SupervisionFacts): { enable: boolean; holds: boolean } {
  if (!autoSupervise) return { enable: false, holds: false };
  if (!s.enabled) return { enable: true, holds: true };
  return { enable: false, holds: s.started_by === 'workflow' };
}

/** Supervision closes (workflow_converged) only when the last run holding it converges, and only if a workflow still owns it. */
export function onRunConverge(run: WorkflowRun, otherHolders: number, s: SupervisionFacts): { disable: boolean } {
  return { disable: run.holds_supervision && otherHolders === 0 && s.enabled && s.started_by === 'workflow' };
}
