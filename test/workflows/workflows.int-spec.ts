import { EventBus } from '../../src/bus/event-bus';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { Journal } from '../../src/journal/journal.port';
import { SupervisionService } from '../../src/supervision/supervision.service';
import { WorkflowsService } from '../../src/workflows/workflows.service';
import { MemorySessionDirectory } from '../support/memory-session-directory';
import { tempDir } from '../support/temp-dir';

let n = 0;
const ids = () => String(++n);

describe('workflow runs and auto_supervise over a real journal', () => {
  let dir: ReturnType<typeof tempDir>;
  let journal: Journal;
  let bus: EventBus;
  let sessions: MemorySessionDirectory;
  let supervision: SupervisionService;
  let workflows: WorkflowsService;

  const boot = async () => {
    journal = await openLevelJournal(dir.path);
    bus = new EventBus(journal);
    sessions = new MemorySessionDirectory(journal);
    sessions.add('cs_a');
    supervision = new SupervisionService(bus, journal, sessions, { debounce_ms: 20, restore_ttl_s: 900, round_timeout_s: 600 }, Date.now, ids);
    await supervision.start();
    workflows = new WorkflowsService(journal, supervision, sessions, Date.now, ids);
    await workflows.start();
  };
  const shutdown = async () => {
    supervision.stop();
    await journal.close();
  };
  const state = () => supervision.status().autonomous;

  beforeEach(async () => {
    dir = tempDir('brainstem-wf-');
    await boot();
  });
  afterEach(async () => {
    await shutdown();
    dir.remove();
  });

  it('given supervision off, an auto_supervise run turns it on and turns it off at convergence', async () => {
    const run = await workflows.startRun({ workflow_id: 'release' }, 'test');
    expect(run).toMatchObject({ id: expect.stringMatching(/^wr_/), status: 'running', auto_supervise: true, supervision_started_by_run: true });
    expect(state()).toMatchObject({ enabled: true, started_by: 'workflow' });
    const done = await workflows.convergeRun(run.id);
    expect(done.status).toBe('converged');
    expect(state()).toMatchObject({ enabled: false, closed_reason: 'workflow_converged' });
  });

  it('given supervision the user enabled, a run reuses it and leaves it on at convergence', async () => {
    await supervision.enable({ task_hint: 'mine' }, 'user', 'test');
    const run = await workflows.startRun({ workflow_id: 'release' }, 'test');
    expect(run.supervision_started_by_run).toBe(false);
    await workflows.convergeRun(run.id);
    expect(state()).toMatchObject({ enabled: true, started_by: 'user', task_hint: 'mine' });
  });

  it('with auto_supervise false, leaves supervision alone', async () => {
    const run = await workflows.startRun({ workflow_id: 'lint', auto_supervise: false }, 'test');
    expect(state()).toBeNull();
    await workflows.convergeRun(run.id);
    expect(state()).toBeNull();
  });

  it('given overlapping runs, closes only when the last run holding supervision converges', async () => {
    const a = await workflows.startRun({ workflow_id: 'a' }, 'test');
    const b = await workflows.startRun({ workflow_id: 'b' }, 'test');
    expect(b).toMatchObject({ supervision_started_by_run: false, holds_supervision: true });
    await workflows.convergeRun(a.id);
    expect(state()?.enabled).toBe(true);
    await workflows.convergeRun(b.id);
    expect(state()).toMatchObject({ enabled: false, closed_reason: 'workflow_converged' });
  });

  it('survives a restart: runs and holds are rebuilt from the journal', async () => {
    const a = await workflows.startRun({ workflow_id: 'a', name: 'Release A', session_ids: ['cs_a'] }, 'test');
    await shutdown();
    await boot();
    expect(workflows.get(a.id)).toMatchObject({ name: 'Release A', status: 'running', holds_supervision: true, session_ids: ['cs_a'] });
    expect(state()?.enabled).toBe(true);
    await workflows.convergeRun(a.id);
    expect(state()?.closed_reason).toBe('workflow_converged');
  });

  it('records the sessions a run names as cs_ ids (aliases resolved, once each) and refuses a name that is no session', async () => {
    const run = await workflows.startRun({ workflow_id: 'a', auto_supervise: false, session_ids: ['w1', 'cs_a'] }, 'test');
    expect(run.session_ids).toEqual(['cs_a']);
    const before = journal.head().seq;
    await expect(workflows.startRun({ workflow_id: 'b', session_ids: ['cs_a', 'w9', 'cs_gone'] }, 'test')).rejects.toMatchObject({
      code: 'run_session_unknown',
      message: 'session_ids: no session "w9", "cs_gone"',
    });
    expect(journal.head().seq).toBe(before);
    expect(state()).toBeNull();
  });

  it('answers 404 for an unknown run and 409 for converging twice', async () => {
    await expect(workflows.convergeRun('wr_nope')).rejects.toMatchObject({ code: 'run_not_found' });
    const run = await workflows.startRun({ workflow_id: 'x', auto_supervise: false }, 'test');
    await workflows.convergeRun(run.id);
    await expect(workflows.convergeRun(run.id)).rejects.toMatchObject({ code: 'run_already_converged' });
  });
});
