import { WorkflowCommand, WorkflowRunEvent, decide, evolve } from './workflow.decider';
import { SupervisionFacts, WorkflowRun } from './workflow-run';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
const OFF: SupervisionFacts = { enabled: false, started_by: null };
const BY_WORKFLOW: SupervisionFacts = { enabled: true, started_by: 'workflow' };
const SESSIONS = [
  { id: 'cs_a', alias: 'w1' },
  { id: 'cs_b', alias: 'w2' },
];

const start = (over: Partial<Extract<WorkflowCommand, { type: 'start_run' }>> = {}): WorkflowCommand => ({
  type: 'start_run',
  run_id: 'wr_1',
  workflow_id: 'release',
  session_refs: [],
  sessions: SESSIONS,
  supervision: OFF,
  now: T0,
  ...over,
});

/** Given: the run's journal, folded as replay folds it. */
function given(...events: WorkflowRunEvent[]): WorkflowRun | null {
  return events.reduce<WorkflowRun | null>((run, e, i) => evolve(run, { ...e, at: new Date(T0 + 1000 * (i + 1)).toISOString() }), null);
}

const startedRun = (over: Partial<WorkflowRun> = {}): WorkflowRunEvent => {
  const d = decide(start(), null);
  const run = (d.events[0] as Extract<WorkflowRunEvent, { type: 'workflow.started' }>).data.run;
  return { type: 'workflow.started', data: { run: { ...run, ...over } } };
};

describe('workflow run decide/evolve', () => {
  describe('start_run', () => {
    it('Given no run, When one starts with auto_supervise (the default) while supervision is off, Then workflow.started records that it turns supervision on and holds it', () => {
      const d = decide(start({ name: 'Release A', session_refs: ['w1', 'cs_a', 'w2'] }), null);
      expect(d.error).toBeUndefined();
      expect(d.events).toEqual([
        {
          type: 'workflow.started',
          data: {
            run: {
              id: 'wr_1',
              workflow_id: 'release',
              name: 'Release A',
              status: 'running',
              auto_supervise: true,
              supervision_started_by_run: true,
              holds_supervision: true,
              session_ids: ['cs_a', 'cs_b'],
              started_at: '2026-11-25T10:00:00.000Z',
              converged_at: null,
            },
          },
        },
      ]);
      expect(given(...d.events)).toMatchObject({ id: 'wr_1', status: 'running' });
    });

    it('When one starts without a name or auto_supervise, Then it is named after its workflow and leaves supervision alone', () => {
      const d = decide(start({ auto_supervise: false }), null);
      expect(d.events[0]).toMatchObject({ data: { run: { name: 'release', auto_supervise: false, supervision_started_by_run: false, holds_supervision: false } } });
    });

    it('Given supervision the user turned on, When an auto_supervise run starts, Then it reuses it without holding it', () => {
      expect(decide(start({ supervision: { enabled: true, started_by: 'user' } }), null).events[0]).toMatchObject({
        data: { run: { supervision_started_by_run: false, holds_supervision: false } },
      });
    });

    it('When a run names sessions that do not exist, Then it is refused as run_session_unknown, naming them', () => {
      expect(decide(start({ session_refs: ['cs_a', 'w9', 'cs_gone'] }), null)).toEqual({
        events: [],
        error: { code: 'run_session_unknown', message: 'session_ids: no session "w9", "cs_gone"' },
      });
    });

    it('Given the run started, When it starts again, Then it is refused as run_already_started', () => {
      expect(decide(start(), given(startedRun())).error).toEqual({ code: 'run_already_started', message: 'workflow run wr_1 exists already' });
    });
  });

  describe('converge_run', () => {
    const converge = (other_holders = 0, supervision: SupervisionFacts = BY_WORKFLOW): WorkflowCommand => ({ type: 'converge_run', run_id: 'wr_1', other_holders, supervision });

    it('Given the last run holding workflow-started supervision, When it converges, Then workflow.converged says supervision closes, and the run is converged', () => {
      const d = decide(converge(), given(startedRun()));
      expect(d.events).toEqual([{ type: 'workflow.converged', data: { run_id: 'wr_1', supervision_closed: true } }]);
      expect(given(startedRun(), ...d.events)).toMatchObject({ status: 'converged', converged_at: '2026-11-25T10:00:02.000Z' });
    });

    it('Given other runs still hold supervision, or the user owns it, or the run never held it, When it converges, Then supervision stays open', () => {
      expect(decide(converge(1), given(startedRun())).events).toEqual([{ type: 'workflow.converged', data: { run_id: 'wr_1', supervision_closed: false } }]);
      expect(decide(converge(0, { enabled: true, started_by: 'user' }), given(startedRun())).events[0]).toMatchObject({ data: { supervision_closed: false } });
      expect(decide(converge(), given(startedRun({ holds_supervision: false }))).events[0]).toMatchObject({ data: { supervision_closed: false } });
    });

    it('Given the run converged, When it converges again, Then it is refused as run_already_converged', () => {
      const s = given(startedRun(), { type: 'workflow.converged', data: { run_id: 'wr_1', supervision_closed: true } });
      expect(decide(converge(), s)).toEqual({ events: [], error: { code: 'run_already_converged', message: 'workflow run wr_1 has already converged' } });
    });

    it('Given no run, When it converges, Then it is refused as run_not_found', () => {
      expect(decide(converge(), null).error).toEqual({ code: 'run_not_found', message: 'no workflow run "wr_1"' });
    });
  });

  it('Given no run, When a convergence is folded (a run that left memory), Then there is still no run', () => {
    expect(given({ type: 'workflow.converged', data: { run_id: 'wr_1', supervision_closed: false } })).toBeNull();
  });
});
