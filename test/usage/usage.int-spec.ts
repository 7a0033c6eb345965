import { Journal, JournalEvent } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { startTestApp } from '../support/test-app';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WorkerReaper } from '../support/workers';

type Json = Record<string, any>;

/** What each turn of the fake claude reports (claude 2.1.33x's result carries it per model): 160 tokens, a cent. */
const TURN = { input_tokens: 100, output_tokens: 20, cache_read_tokens: 30, cache_write_tokens: 10, cost_usd: 0.01 };
const claudeEnv = (usage: object = TURN) => ({ PATH: `${FAKE_BIN}:${process.env.PATH}`, FAKE_CLAUDE_USAGE: JSON.stringify(usage) });

describe('usage and budgets, with fake claude workers', () => {
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-cwd-');
  const t = useTestApp({ BRAINSTEM_PRICES: JSON.stringify({ default: { input: 1, output: 1, cache_read: 1, cache_write: 1 } }) }, { beforeClose: () => reaper.killAll() });
  afterAll(() => cwd.remove());

  const req = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object): Promise<{ status: number; body: Json }> => {
    const res = await t.inject({ method, url: `/api/v1${url}`, payload });
    return { status: res.statusCode, body: res.json() };
  };
  const events = async (id: string): Promise<JournalEvent[]> => t.app.get<Journal>(JOURNAL).readStream(`session-${id}`);
  const ofType = async (id: string, type: string) => (await events(id)).filter((e) => e.type === type).map((e) => e.data as Json);
  async function start(body: object): Promise<Json> {
    const res = await req('POST', '/coding-sessions', { cwd: cwd.path, runtime: 'claude-code', env: claudeEnv(), ...body });
    expect(res.status).toBe(201);
    reaper.track(res.body.pid);
    return res.body;
  }
  const untilIdle = (id: string, turns: number) =>
    waitFor(async () => {
      const s = (await req('GET', `/coding-sessions/${id}`)).body;
      return s.state === 'pending_handling' && (await ofType(id, 'session.turn_ended')).length >= turns ? s : undefined;
    }, { what: `${turns} turn(s) of ${id} ended` });

  it('given two turns that each report their usage, then the session, its profile and the day total exactly what was reported', async () => {
    const s = await start({ prompt: 'first' });
    await untilIdle(s.id, 1);
    expect((await req('POST', `/coding-sessions/${s.id}/messages`, { text: 'second' })).status).toBe(200);
    const status = await untilIdle(s.id, 2);
    expect(status.usage).toEqual({ turns: 2, input_tokens: 200, output_tokens: 40, cache_read_tokens: 60, cache_write_tokens: 20, tokens: 320, cost_usd: 0.02, cost_estimated: false });
    expect(await ofType(s.id, 'session.usage')).toEqual([
      { at: expect.any(Number), turn: 1, model: 'fake-model', ...TURN, cost_estimated: false },
      { at: expect.any(Number), turn: 2, model: 'fake-model', ...TURN, cost_estimated: false },
    ]);
    const bySession = await waitFor(async () => {
      const r = (await req('GET', '/usage?group_by=session')).body;
      return r.rows.find((x: Json) => x.session_id === s.id && x.turns === 2) ? r : undefined;
    }, { what: 'the projection to fold both turns' });
    expect(bySession.rows.find((x: Json) => x.session_id === s.id)).toMatchObject({ alias: s.alias, profile_id: s.profile_id, tokens: 320, cost_usd: 0.02 });
    const today = new Date().toISOString().slice(0, 10);
    const byDay = (await req('GET', `/usage?group_by=day&since=${today}&until=${today}`)).body;
    expect(byDay.rows).toEqual([expect.objectContaining({ day: today, workers: expect.objectContaining({ turns: expect.any(Number) }) })]);
    expect(byDay.total.cost_usd).toBeGreaterThanOrEqual(0.02);
    const byProfile = (await req('GET', '/usage?group_by=profile')).body;
    expect(byProfile.rows.find((r: Json) => r.profile_id === s.profile_id).cost_usd).toBeGreaterThanOrEqual(0.02);
  }, 60000);

  it('given a runtime that reports no cost, then the price table prices it, marked estimated', async () => {
    const { cost_usd: _none, ...tokens } = TURN;
    const s = await start({ prompt: 'first', env: claudeEnv(tokens) });
    const status = await untilIdle(s.id, 1);
    // 160 tokens at $1 per million.
    expect(status.usage).toMatchObject({ tokens: 160, cost_usd: 0.00016, cost_estimated: true });
  }, 60000);

  it('given a runtime reporting garbage usage, then it is logged and not counted, and the session goes on', async () => {
    const s = await start({ prompt: 'report garbage usage' });
    const status = await untilIdle(s.id, 1);
    expect(status.usage).toMatchObject({ turns: 0, tokens: 0, cost_usd: 0 });
    expect(await ofType(s.id, 'session.usage')).toEqual([]);
    expect((await req('POST', `/coding-sessions/${s.id}/messages`, { text: 'next' })).status).toBe(200);
    expect((await untilIdle(s.id, 2)).usage).toMatchObject({ turns: 1, tokens: 160 });
  }, 60000);

  it('given a budget of 300 tokens, then the second turn (320) holds the session with a notice and a request to the user, and raising the budget releases it', async () => {
    const s = await start({ prompt: 'first', budget: { tokens: 300 } });
    await untilIdle(s.id, 1);
    // 160 of 300: past 80%? No (53%). The second turn reaches 320.
    expect(await ofType(s.id, 'session.budget_warning')).toEqual([]);
    await req('POST', `/coding-sessions/${s.id}/messages`, { text: 'second' });
    const held = await waitFor(async () => {
      const x = (await req('GET', `/coding-sessions/${s.id}`)).body;
      return x.held ? x : undefined;
    }, { what: 'the session held' });
    expect(held.held).toMatchObject({ reason: 'budget', detail: 'its session budget of 300 tokens: 320 tokens used (106%)' });
    expect(await req('POST', `/coding-sessions/${s.id}/messages`, { text: 'third' })).toMatchObject({ status: 409, body: { code: 'session_held' } });
    const asked = await waitFor(async () => {
      const c = (await req('GET', '/session-os/main-brain/confirmations?status=pending')).body.confirmations as Json[];
      return c.find((x) => x.tool === 'set_session_budget' && x.args.session === s.id);
    }, { what: 'the user asked to raise the budget' });
    expect(asked).toMatchObject({ requested_by: 'brainstem', args: { session: s.id, tokens: 600 } });
    expect(asked.description).toContain('from 300 tokens to 600 tokens');
    // The user answers it: the budget is raised, and the session released.
    const confirmed = await req('POST', `/session-os/main-brain/confirmations/${asked.id}/confirm`);
    expect(confirmed.body.outcome).toMatchObject({ ok: true });
    const after = (await req('GET', `/coding-sessions/${s.id}`)).body;
    expect(after).toMatchObject({ held: null, budget: { tokens: 600 } });
    expect((await ofType(s.id, 'session.released')).map((r) => r.by)).toEqual(['budget_raised']);
    expect((await req('POST', `/coding-sessions/${s.id}/messages`, { text: 'third' })).status).toBe(200);
  }, 60000);

  it('given a turn past 80% of the budget, then a warning is journaled and posted in the chat; PATCH lowers it under what is used, which holds at once', async () => {
    const s = await start({ prompt: 'first', budget: { usd: 0.0125 } });
    await untilIdle(s.id, 1);
    expect(await ofType(s.id, 'session.budget_warning')).toEqual([expect.objectContaining({ scope: 'session', unit: 'usd', used: 0.01, limit: 0.0125 })]);
    await waitFor(async () => {
      const chat = (await req('GET', '/session-os/main-brain/messages')).body.messages as Json[];
      return chat.some((m) => m.text.includes(`Session ${s.alias} (${s.id}) is past 80%`)) || undefined;
    }, { what: 'the warning in the chat' });
    const lowered = await req('PATCH', `/coding-sessions/${s.id}/budget`, { usd: 0.005 });
    expect(lowered.body).toMatchObject({ budget: { usd: 0.005 }, held: { reason: 'budget' } });
    const cleared = await req('PATCH', `/coding-sessions/${s.id}/budget`, {});
    expect(cleared.body).toMatchObject({ budget: null, held: null });
  }, 60000);

  it.each([
    [{ tokens: -1 }, 'tokens'],
    [{ tokens: 1.5 }, 'tokens'],
    [{ tokens: 1e13 }, 'tokens'],
    [{ usd: 0 }, 'usd'],
    [{ usd: 'NaN' }, 'usd'],
    [{ usd: 2e6 }, 'usd'],
    [{ usd: -3 }, 'usd'],
  ])('given the budget %j, then the start and the PATCH are refused with 400 naming %s, and nothing is created', async (budget, field) => {
    const before = (await req('GET', '/coding-sessions')).body.sessions.length;
    const res = await req('POST', '/coding-sessions', { cwd: cwd.path, runtime: 'claude-code', env: claudeEnv(), budget });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(field);
    expect((await req('GET', '/coding-sessions')).body.sessions.length).toBe(before);
    const some = (await req('GET', '/coding-sessions')).body.sessions[0];
    expect((await req('PATCH', `/coding-sessions/${some.id}/budget`, budget)).status).toBe(400);
  });

  it('given bad usage queries, then 400 names what is wrong', async () => {
    for (const [q, field] of [['group_by=week', 'group_by'], ['', 'group_by'], ['group_by=day&since=2026-13-01', 'since'], ['group_by=day&since=2026-02-30', 'since'], ['group_by=day&since=2026-05-02&until=2026-05-01', 'until']]) {
      const res = await req('GET', `/usage?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.message).toContain(field);
    }
  });

  it("given a profile's per-session budget, then its sessions are held by it, and raising it in the profile releases them", async () => {
    const made = await req('POST', '/agent-profiles', { name: 'Thrifty', target_runtime: 'claude-code', budget: { per_session: { tokens: 100 } } });
    expect(made.status).toBe(201);
    const s = await start({ prompt: 'first', profile_id: made.body.id });
    await waitFor(async () => ((await req('GET', `/coding-sessions/${s.id}`)).body.held ? true : undefined), { what: 'held by the profile budget' });
    const updated = await req('PATCH', `/agent-profiles/${made.body.id}`, { budget: { per_session: { tokens: 1000 } } });
    expect(updated.status).toBe(200);
    await waitFor(async () => ((await req('GET', `/coding-sessions/${s.id}`)).body.held === null ? true : undefined), { what: 'released by the profile edit' });
  }, 60000);

  it("given a profile's day budget spent, then its running sessions are held and a new session of it is refused with 409 budget_exhausted", async () => {
    const made = await req('POST', '/agent-profiles', { name: 'Daily', target_runtime: 'claude-code', budget: { per_day: { tokens: 300 } } });
    const idle = await start({ profile_id: made.body.id });
    const busy = await start({ prompt: 'first', profile_id: made.body.id });
    await untilIdle(busy.id, 1);
    await req('POST', `/coding-sessions/${busy.id}/messages`, { text: 'second' });
    for (const s of [busy, idle]) {
      await waitFor(async () => ((await req('GET', `/coding-sessions/${s.id}`)).body.held?.reason === 'budget' ? true : undefined), { what: `${s.alias} held by the day budget` });
    }
    const refused = await req('POST', '/coding-sessions', { cwd: cwd.path, runtime: 'claude-code', env: claudeEnv(), profile_id: made.body.id, prompt: 'x' });
    expect(refused).toMatchObject({ status: 409, body: { code: 'budget_exhausted' } });
    expect(refused.body.message).toContain("its profile's budget for today (UTC) of 300 tokens");
  }, 60000);

  it('given a worker that hits its rate limit, then the session shows it with when it resets', async () => {
    const s = await start({ prompt: 'hit the rate limit' });
    const status = await waitFor(async () => {
      const x = (await req('GET', `/coding-sessions/${s.id}`)).body;
      return x.rate_limit ? x : undefined;
    }, { what: 'the rate limit shown' });
    expect(status.rate_limit).toMatchObject({ status: 'rejected', limit_type: 'five_hour', resets_at: expect.stringMatching(/^\d{4}-/) });
    expect(Date.parse(status.rate_limit.resets_at)).toBeGreaterThan(Date.now());
  }, 60000);
});

describe('usage across a restart', () => {
  const dir = tempDir('brainstem-usage-restart-');
  const cwd = tempDir('brainstem-cwd-');
  const reaper = new WorkerReaper();
  afterAll(() => {
    reaper.killAll();
    dir.remove();
    cwd.remove();
  });

  it('given usage journaled, then a restarted service has the same totals, from the snapshot it left and the journal after it', async () => {
    const env = { BRAINSTEM_JOURNAL_DIR: `${dir.path}/journal`, BRAINSTEM_PROFILES_DIR: `${dir.path}/profiles` };
    const first = await startTestApp(env);
    const res = await first.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, runtime: 'claude-code', env: claudeEnv(), prompt: 'first', budget: { tokens: 100 } } });
    const id = res.json().id;
    reaper.track(res.json().pid);
    const held = await waitFor(async () => {
      const s = (await first.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json();
      return s.held ? s : undefined;
    }, { what: 'the first turn counted' });
    const report = (await first.inject({ method: 'GET', url: '/api/v1/usage?group_by=session' })).json();
    await first.close();
    reaper.killAll();

    const second = await startTestApp(env);
    try {
      const again = (await second.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json();
      expect(again.usage).toEqual(held.usage);
      expect(again.held).toMatchObject({ reason: 'budget' });
      expect((await second.inject({ method: 'GET', url: '/api/v1/usage?group_by=session' })).json()).toEqual(report);
      // The first service left a snapshot of the projection as it stopped: the second read it, and folded what follows.
      const journal = second.app.get<Journal>(JOURNAL);
      expect((await journal.loadProjection('usage'))?.seq).toBeGreaterThan(0);
    } finally {
      await second.close();
    }
  }, 60000);
});

describe("the hosted brain's budget, with a fake claude as the brain", () => {
  const BASE = '/api/v1/session-os/main-brain';
  // Each turn of the brain costs $0.60; its day budget is $1: the second turn reaches it.
  const host = { env: { ...process.env, PATH: `${FAKE_BIN}:${process.env.PATH}`, FAKE_CLAUDE_USAGE: JSON.stringify({ ...TURN, cost_usd: 0.6 }) }, home: process.env.HOME ?? '/', cwd: process.cwd() };
  const t = useTestApp({ BRAINSTEM_MAIN_BRAIN_DRIVER: 'agent', BRAINSTEM_MAIN_BRAIN_RUNTIME: 'claude-code', BRAINSTEM_MAIN_BRAIN_BUDGET_USD: '1' }, { listen: true, host });

  const say = (text: string) => t.inject({ method: 'POST', url: `${BASE}/messages`, payload: { text } });
  const chat = async () => (await t.inject({ method: 'GET', url: `${BASE}/messages` })).json().messages as Json[];
  const turns = async () => (await t.inject({ method: 'GET', url: `${BASE}/conversation` })).json().conversation as Json;
  const afterTurns = (n: number) =>
    waitFor(async () => {
      const c = await turns();
      return c.turns >= n && c.turn_in_flight === null ? c : undefined;
    }, { what: `${n} turn(s) of the brain` });

  it('given the brain reaches its day budget, then it says so, takes no more turns, and fails a round with the reason', async () => {
    await say('first');
    await afterTurns(1);
    await say('second');
    await afterTurns(2);
    const usage = (await t.inject({ method: 'GET', url: '/api/v1/usage?group_by=brain' })).json();
    expect(usage.total).toMatchObject({ turns: 2, cost_usd: 1.2 });
    await waitFor(async () => ((await chat()).some((m) => m.kind === 'notice' && String(m.text).startsWith('The main brain takes no more turns')) ? true : undefined), {
      what: 'the notice that the brain stops',
    });
    await say('third');
    const sup = await t.inject({ method: 'POST', url: `${BASE}/autonomous`, payload: { enabled: true } });
    expect(sup.statusCode).toBeLessThan(300);
    const worker = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: process.cwd(), command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60000)'] } });
    await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${worker.json().id}/signals`, payload: { type: 'notify_blocked', reason: 'stuck' } });
    const round = await waitFor(async () => ((await t.inject({ method: 'GET', url: `${BASE}/rounds` })).json().rounds as Json[]).find((r) => r.status === 'failed'), {
      what: 'the round failed',
    });
    expect(round.failure).toContain('The main brain takes no more turns');
    expect((await turns()).turns).toBe(2);
    await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${worker.json().id}/stop`, payload: { grace_ms: 0 } });
  }, 60000);
});

describe("Brainstem's day budget spent by the brain, with a fake claude as the brain and as a worker", () => {
  const BASE = '/api/v1/session-os/main-brain';
  const cwd = tempDir('brainstem-cwd-');
  const reaper = new WorkerReaper();
  // Each turn of the brain costs $0.60, and Brainstem may spend $1 a day: the brain's second turn spends it.
  const host = { env: { ...process.env, PATH: `${FAKE_BIN}:${process.env.PATH}`, FAKE_CLAUDE_USAGE: JSON.stringify({ ...TURN, cost_usd: 0.6 }) }, home: process.env.HOME ?? '/', cwd: process.cwd() };
  const t = useTestApp({ BRAINSTEM_MAIN_BRAIN_DRIVER: 'agent', BRAINSTEM_MAIN_BRAIN_RUNTIME: 'claude-code', BRAINSTEM_BUDGET_USD_PER_DAY: '1' }, { listen: true, host, beforeClose: () => reaper.killAll() });
  afterAll(() => cwd.remove());

  it('given an idle worker, when the brain spends the day budget, then the worker is held too and a new session is refused', async () => {
    const worker = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, runtime: 'claude-code', env: claudeEnv({ ...TURN, cost_usd: 0 }) } });
    expect(worker.statusCode).toBe(201);
    reaper.track(worker.json().pid);
    for (const text of ['first', 'second']) {
      await t.inject({ method: 'POST', url: `${BASE}/messages`, payload: { text } });
      await waitFor(async () => {
        const c = (await t.inject({ method: 'GET', url: `${BASE}/conversation` })).json().conversation as Json;
        return c.turns >= (text === 'first' ? 1 : 2) && c.turn_in_flight === null ? true : undefined;
      }, { what: `the brain's ${text} turn` });
    }
    const held = await waitFor(async () => {
      const s = (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${worker.json().id}` })).json();
      return s.held ? s : undefined;
    }, { what: 'the worker held by the day budget' });
    expect(held.held.detail).toContain("Brainstem's budget for today (UTC, BRAINSTEM_BUDGET_USD_PER_DAY) of $1.00");
    const refused = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, runtime: 'claude-code', env: claudeEnv(), prompt: 'x' } });
    expect(refused.json()).toMatchObject({ code: 'budget_exhausted' });
  }, 60000);
});
