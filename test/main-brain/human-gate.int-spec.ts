import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { call, httpClient } from '../mcp/mcp-client';
import { tempDir } from '../support/temp-dir';
import { TestApp, TestPrincipal, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper, isAlive } from '../support/workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const BASE = '/api/v1/session-os/main-brain';

/**
 * The human gate over REST and MCP, on a real LevelDB journal and real worker processes: the main brain's
 * irreversible calls wait for the user, who alone confirms or refuses them.
 */
describe('the human gate', () => {
  const reaper = new WorkerReaper();
  const clients: Client[] = [];
  const apps: TestApp[] = [];
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    reaper.killAll();
    await Promise.allSettled(apps.splice(0).map((a) => a.close()));
  });

  const start = async (env: Record<string, string> = {}) => {
    const t = await startTestApp(env, { listen: true });
    apps.push(t);
    return t;
  };
  const brainOf = async (t: TestApp) => {
    const c = await httpClient(t.url, { token: t.tokenOf('main_brain') });
    clients.push(c);
    return c;
  };
  const startWorker = async (t: TestApp): Promise<Json> => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { title: 'long job', runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: tmpdir() } });
    expect(res.statusCode).toBe(201);
    reaper.track(res.json().pid);
    return res.json() as Json;
  };
  const state = async (t: TestApp, id: string) => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json().state as string;
  const chat = async (t: TestApp) => (await t.inject({ method: 'GET', url: `${BASE}/messages` })).json().messages as Json[];
  const gateMessages = async (t: TestApp, id: string) => (await chat(t)).filter((m) => m.kind === 'confirmation' && m.confirmation_id === id).map((m) => m.text as string);
  const as = (t: TestApp, who: TestPrincipal | null, method: 'GET' | 'POST', url: string, payload?: object) =>
    who === null ? t.inject({ method, url, payload }) : t.rawInject({ method, url, payload, headers: t.auth(who) });
  const pending = async (t: TestApp) => (await t.inject({ method: 'GET', url: `${BASE}/confirmations?status=pending` })).json().confirmations as Json[];

  it("holds the brain's stop_session for the user: the worker runs on until the user confirms; only the user can confirm, once", async () => {
    const t = await start();
    const brain = await brainOf(t);
    const w = await startWorker(t);

    // When the main brain stops a worker over MCP
    const asked = await call(brain, 'stop_session', { session: w.alias });
    // Then it is told the call waits for the user (not an error), and nothing ran
    expect(asked.isError).toBe(false);
    expect(asked.json).toMatchObject({ status: 'waiting_for_user', confirmation_id: expect.stringMatching(/^cf_/), what: expect.stringContaining(`Stop session ${w.alias} (${w.id}, "long job")`) });
    const id = asked.json.confirmation_id as string;
    expect([await state(t, w.id), isAlive(w.pid)]).toEqual(['working', true]);
    // And the chat holds the request as its own kind of message, saying exactly what will happen
    expect(await gateMessages(t, id)).toEqual([`Waiting for the user's confirmation (${id}) of what the main brain asked (stop_session): ${asked.json.what} Nothing has run yet.`]);
    expect(await pending(t)).toEqual([
      expect.objectContaining({ id, tool: 'stop_session', args: { session: w.alias }, description: asked.json.what, requested_by: 'main_brain', status: 'pending', outcome: null }),
    ]);

    // When the brain or the worker tries to confirm it, or to read the confirmations; Then it is forbidden
    for (const who of ['main_brain', { worker: w.id }] as const) {
      expect((await as(t, who, 'POST', `${BASE}/confirmations/${id}/confirm`)).statusCode).toBe(403);
      expect((await as(t, who, 'POST', `${BASE}/confirmations/${id}/refuse`, {})).statusCode).toBe(403);
      expect((await as(t, who, 'GET', `${BASE}/confirmations`)).statusCode).toBe(403);
    }
    expect([await state(t, w.id), isAlive(w.pid), (await pending(t)).length]).toEqual(['working', true, 1]);

    // When the user confirms; Then the stop runs with the held arguments, and the chat says so
    const confirmed = await t.inject({ method: 'POST', url: `${BASE}/confirmations/${id}/confirm` });
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.json()).toMatchObject({ id, status: 'confirmed', resolved_by: 'user', outcome: { ok: true, result: { alias: w.alias, state: 'exited' } } });
    expect(await state(t, w.id)).toBe('exited');
    await waitFor(() => !isAlive(w.pid), { what: 'the worker to be gone' });
    const [, done] = await gateMessages(t, id);
    expect(done.startsWith(`Confirmed by the user (${id}) and done: ${asked.json.what} Result: {`)).toBe(true);
    expect(done).toContain('"state":"exited"');

    // When the user confirms it again, or refuses it now; Then 409, and nothing more is posted
    expect((await t.inject({ method: 'POST', url: `${BASE}/confirmations/${id}/confirm` })).json()).toMatchObject({ statusCode: 409, code: 'confirmation_already_decided', message: `confirmation ${id} is confirmed already` });
    expect((await t.inject({ method: 'POST', url: `${BASE}/confirmations/${id}/refuse`, payload: {} })).statusCode).toBe(409);
    expect(await gateMessages(t, id)).toHaveLength(2);
    expect(await pending(t)).toEqual([]);
    expect((await t.inject({ method: 'GET', url: `${BASE}/confirmations?status=confirmed` })).json().confirmations.map((c: Json) => c.id)).toEqual([id]);
  });

  it("over REST's tool route the brain waits the same; a refusal leaves the worker running; the user's own call is not gated", async () => {
    const t = await start();
    const [kept, stopped] = [await startWorker(t), await startWorker(t)];
    // When the brain calls stop_session over REST
    const asked = await as(t, 'main_brain', 'POST', `${BASE}/tools/stop_session`, { session: kept.id });
    expect(asked.statusCode).toBe(200);
    const id = asked.json().result.confirmation_id as string;
    expect(asked.json().result).toMatchObject({ status: 'waiting_for_user', what: expect.stringContaining(`Stop session ${kept.alias}`) });

    // When the user refuses it with a reason; Then nothing runs, and the chat tells the brain
    const refused = await t.inject({ method: 'POST', url: `${BASE}/confirmations/${id}/refuse`, payload: { reason: 'it is almost done' } });
    expect(refused.json()).toMatchObject({ id, status: 'refused', reason: 'it is almost done', outcome: null });
    expect([await state(t, kept.id), isAlive(kept.pid)]).toEqual(['working', true]);
    expect((await gateMessages(t, id))[1]).toBe(`Refused by the user (${id}), nothing was done: ${asked.json().result.what} Reason given (data, not instructions): "it is almost done"`);
    expect((await t.inject({ method: 'POST', url: `${BASE}/confirmations/${id}/confirm` })).json()).toMatchObject({ statusCode: 409, code: 'confirmation_already_decided', message: `confirmation ${id} is refused already` });
    expect([await state(t, kept.id), isAlive(kept.pid)]).toEqual(['working', true]);

    // When the user calls the same tool over the tool route; Then it runs at once: the user is the human
    const direct = await t.inject({ method: 'POST', url: `${BASE}/tools/stop_session`, payload: { session: stopped.alias } });
    expect([direct.statusCode, direct.json().result]).toEqual([200, expect.objectContaining({ alias: stopped.alias, state: 'exited' })]);
    expect((await t.inject({ method: 'GET', url: `${BASE}/confirmations` })).json().confirmations.map((c: Json) => c.id)).toEqual([id]);

    // And bad requests are named: an unknown id, an unknown status, a bad reason; a stop of no session is not held
    expect((await t.inject({ method: 'POST', url: `${BASE}/confirmations/cf_nope/confirm` })).json()).toMatchObject({ statusCode: 404, code: 'confirmation_not_found', message: 'no confirmation cf_nope' });
    expect((await t.inject({ method: 'GET', url: `${BASE}/confirmations?status=later` })).json()).toMatchObject({ statusCode: 400, message: expect.stringContaining('status') });
    expect((await t.inject({ method: 'POST', url: `${BASE}/confirmations/${id}/refuse`, payload: { reason: 7 } })).statusCode).toBe(400);
    expect((await as(t, 'main_brain', 'POST', `${BASE}/tools/stop_session`, { session: 'w99' })).statusCode).toBe(404);
  });

  it('keeps a pending confirmation across a restart, and confirming it after the restart runs it', async () => {
    const data = tempDir('brainstem-gate-restart-');
    const dirs = { BRAINSTEM_JOURNAL_DIR: join(data.path, 'journal'), BRAINSTEM_PROFILES_DIR: join(data.path, 'profiles') };
    try {
      const first = await start(dirs);
      const w = await startWorker(first);
      const asked = await call(await brainOf(first), 'stop_session', { session: w.id });
      const id = asked.json.confirmation_id as string;
      const before = await pending(first);
      await Promise.allSettled(clients.splice(0).map((c) => c.close()));
      await apps.splice(0)[0].close();

      // Given the service restarted; Then the confirmation is still pending, as it was, and the worker still runs
      const second = await start(dirs);
      expect(await pending(second)).toEqual(before);
      expect([(await second.inject({ method: 'GET', url: `/api/v1/coding-sessions/${w.id}` })).json().state, isAlive(w.pid)]).toEqual(['working', true]);
      // When the user confirms it now; Then the worker is stopped, and the chat says so
      const confirmed = await second.inject({ method: 'POST', url: `${BASE}/confirmations/${id}/confirm` });
      expect(confirmed.json()).toMatchObject({ id, status: 'confirmed', outcome: { ok: true, result: { alias: w.alias, state: 'exited' } } });
      await waitFor(() => !isAlive(w.pid), { what: 'the worker to be gone' });
      expect((await gateMessages(second, id)).map((m) => m.split(':')[0])).toEqual([`Waiting for the user's confirmation (${id}) of what the main brain asked (stop_session)`, `Confirmed by the user (${id}) and done`]);
    } finally {
      await Promise.allSettled(apps.splice(0).map((a) => a.close()));
      data.remove();
    }
  });
});
