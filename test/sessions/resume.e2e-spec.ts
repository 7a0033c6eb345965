import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { CONTINUE_TEXT } from '../../src/sessions/session-limit.model';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WorkerReaper } from '../support/workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** POST …/coding-sessions/{id}/resume over HTTP: a fake claude parked at its limit, kept parked, resumed; bad input refused. */
describe('resuming a parked session over HTTP', () => {
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-cwd-');
  const t = useTestApp({}, { listen: true, beforeClose: () => reaper.killAll() });
  afterAll(() => cwd.remove());

  const call = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
    const res = await t.inject({ method, url: `/api/v1/coding-sessions${url}`, payload: payload as object });
    return { status: res.statusCode, body: res.json() as Json };
  };
  const facts = async (id: string) => (await t.app.get<Journal>(JOURNAL).readStream(`session-${id}`)).map((e) => ({ type: e.type, data: e.data as Json }));

  it('given a session parked at its limit, then bad bodies get 400 naming keep_parked, keep_parked disarms its timer, a resume sends the "continue", and a second resume gets 409', async () => {
    const made = await call('POST', '', { cwd: cwd.path, runtime: 'claude-code', env: { PATH: `${FAKE_BIN}:${process.env.PATH}` }, prompt: 'hit the rate limit' });
    expect(made.status).toBe(201);
    reaper.track(made.body.pid);
    const id = made.body.id as string;
    const parked = await waitFor(async () => ((await call('GET', `/${id}`)).body.parked ? (await call('GET', `/${id}`)).body : undefined), { what: 'parked' });
    expect(parked.parked).toMatchObject({ reason: 'rate_limit', source: 'runtime', resumes_at: expect.stringMatching(/^\d{4}-/) });

    const before = (await facts(id)).length;
    for (const body of [{ keep_parked: 'yes' }, { keep_parked: 1 }, { now: true }, []]) {
      const res = await call('POST', `/${id}/resume`, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_input' });
    }
    expect((await call('POST', `/${id}/resume`, { keep_parked: 'yes' })).body.message).toContain('keep_parked');
    expect((await facts(id)).length).toBe(before);

    const kept = await call('POST', `/${id}/resume`, { keep_parked: true });
    expect(kept).toMatchObject({ status: 200, body: { id, state: 'working', parked: { resumes_at: null, source: 'user' } } });
    // Kept already: the same again changes nothing.
    const count = (await facts(id)).length;
    expect((await call('POST', `/${id}/resume`, { keep_parked: true })).status).toBe(200);
    expect((await facts(id)).length).toBe(count);

    const resumed = await call('POST', `/${id}/resume`, {});
    expect(resumed).toMatchObject({ status: 200, body: { id, parked: null } });
    const tail = (await facts(id)).slice(count).filter((f) => f.type !== 'session.state_changed');
    expect(tail.slice(0, 2)).toEqual([
      { type: 'session.unparked', data: { at: expect.any(Number), by: 'user' } },
      { type: 'session.message_dispatched', data: { at: expect.any(Number), text: CONTINUE_TEXT } },
    ]);

    const again = await call('POST', `/${id}/resume`, {});
    expect(again).toMatchObject({ status: 409, body: { code: 'session_not_parked' } });
    expect((await call('POST', '/cs_doesnotexist/resume', {})).status).toBe(404);
  });
});
