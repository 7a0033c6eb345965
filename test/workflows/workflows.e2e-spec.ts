import { useTestApp } from '../support/use-test-app';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('workflow runs over HTTP', () => {
  const t = useTestApp();

  const req = async (method: 'GET' | 'POST', url: string, payload?: Json) => {
    const res = await t.inject({ method, url: `/api/v1${url}`, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json() as Json };
  };

  it('starts a run that turns supervision on, lists it, and converges it turning supervision off', async () => {
    const started = await req('POST', '/workflow-runs', { workflow_id: 'release', name: 'Release 1.2' });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ id: expect.stringMatching(/^wr_/), status: 'running', auto_supervise: true, supervision_started_by_run: true });
    expect((await req('GET', '/session-os/main-brain/autonomous')).body.autonomous).toMatchObject({ enabled: true, started_by: 'workflow' });
    expect((await req('GET', '/workflow-runs')).body.runs.map((r: Json) => r.id)).toContain(started.body.id);
    expect((await req('GET', `/workflow-runs/${started.body.id}`)).body.name).toBe('Release 1.2');
    const converged = await req('POST', `/workflow-runs/${started.body.id}/converge`);
    expect(converged.body).toMatchObject({ status: 'converged', converged_at: expect.any(String) });
    expect((await req('GET', '/session-os/main-brain/autonomous')).body.autonomous).toMatchObject({ enabled: false, closed_reason: 'workflow_converged' });
  });

  it('answers 404 for an unknown run, 409 for converging twice, 400 for bad bodies', async () => {
    expect((await req('GET', '/workflow-runs/wr_nope')).status).toBe(404);
    expect((await req('POST', '/workflow-runs/wr_nope/converge')).body).toMatchObject({ statusCode: 404, code: 'run_not_found' });
    const run = await req('POST', '/workflow-runs', { workflow_id: 'lint', auto_supervise: false });
    await req('POST', `/workflow-runs/${run.body.id}/converge`);
    const again = await req('POST', `/workflow-runs/${run.body.id}/converge`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('run_already_converged');
    for (const bad of [{}, { workflow_id: '' }, { workflow_id: 'x', auto_supervise: 'yes' }, { workflow_id: 'x', extra: 1 }, { workflow_id: 'x', session_ids: 'w1' }]) {
      const res = await req('POST', '/workflow-runs', bad);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_input');
    }
    expect((await req('POST', '/workflow-runs', { workflow_id: 'x', session_ids: ['w99'] })).body).toMatchObject({ statusCode: 400, code: 'run_session_unknown' });
  });
});
