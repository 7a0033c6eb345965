import { WorkflowRun, onRunConverge, onRunStart } from './workflow-run';

const run = (over: Partial<WorkflowRun> = {}): WorkflowRun => ({
  id: 'wr_1',
  workflow_id: 'wf',
  name: 'wf',
  status: 'running',
  auto_supervise: true,
  supervision_started_by_run: true,
  holds_supervision: true,
  session_ids: [],
  started_at: '',
  converged_at: null,
  ...over,
});

describe('workflow runs and supervision', () => {
  it('turns supervision on when it is off and the run auto-supervises', () => {
    expect(onRunStart(true, { enabled: false, started_by: null })).toEqual({ enable: true, holds: true });
  });

  it('leaves supervision alone without auto_supervise', () => {
    expect(onRunStart(false, { enabled: false, started_by: null })).toEqual({ enable: false, holds: false });
  });

  it('reuses supervision the user turned on, without holding it', () => {
    expect(onRunStart(true, { enabled: true, started_by: 'user' })).toEqual({ enable: false, holds: false });
  });

  it('joins the hold on supervision another run turned on', () => {
    expect(onRunStart(true, { enabled: true, started_by: 'workflow' })).toEqual({ enable: false, holds: true });
  });

  it('closes only when the last holder converges and a workflow still owns supervision', () => {
    const on = { enabled: true, started_by: 'workflow' as const };
    expect(onRunConverge(run(), 1, on)).toEqual({ disable: false });
    expect(onRunConverge(run(), 0, on)).toEqual({ disable: true });
    expect(onRunConverge(run(), 0, { enabled: true, started_by: 'user' })).toEqual({ disable: false });
    expect(onRunConverge(run(), 0, { enabled: false, started_by: 'workflow' })).toEqual({ disable: false });
    expect(onRunConverge(run({ holds_supervision: false }), 0, on)).toEqual({ disable: false });
  });
});
