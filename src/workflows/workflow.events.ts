import { WorkflowRun } from './workflow-run';

/** Journaled workflow events: `workflow.registered` on stream `workflows` (the index), the others on the run's stream workflow-<id>. */
export interface WorkflowEventMap {
  'workflow.registered': { run_id: string };
  'workflow.started': { run: WorkflowRun };
  'workflow.converged': { run_id: string; supervision_closed: boolean };
}

declare module '../bus/domain-event' {
  interface DomainEventMap extends WorkflowEventMap {}
}
