import { Journal, JournalEvent } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { CONTINUE_TEXT } from '../../src/sessions/session-limit.model';
import { CapturedLogger } from '../support/captured-logger';
import { TestApp, startTestApp } from '../support/test-app';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WorkerReaper } from '../support/workers';

/**
 * Parking at a model's limit with fake claude workers (real child processes, a real LevelDB journal): sessions parked
 * on one limit resume staggered as configured, a reset already past or too far away is clamped and logged, and a
 * session parked before a restart resumes at its journaled time after it. The real CLIs against fake model APIs are in
 * usage-limits-real.int-spec.ts.
 */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const claudeEnv = { PATH: `${FAKE_BIN}:${process.env.PATH}` };

describe('parking at a limit, with fake claude workers', () => {
  jest.setTimeout(120_000);
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-cwd-');
  const data = tempDir('brainstem-limits-');
  let t: TestApp | null = null;
  let logger: CapturedLogger | null = null;

  afterEach(async () => {
    reaper.killAll();
    await t?.close();
    t = null;
    logger?.release();
    logger = null;
  });
  afterAll(() => {
    cwd.remove();
    data.remove();
  });

  const app = (): TestApp => {
    if (!t) throw new Error('no app');
    return t;
  };
  const get = async (url: string): Promise<Json> => (await app().inject({ method: 'GET', url: `/api/v1${url}` })).json();
  const events = async (id: string): Promise<JournalEvent[]> => app().app.get<Journal>(JOURNAL).readStream(`session-${id}`);
  const ofType = async (id: string, type: string): Promise<Json[]> => (await events(id)).filter((e) => e.type === type).map((e) => e.data as Json);
  async function start(prompt: string): Promise<Json> {
    const res = await app().inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, runtime: 'claude-code', env: claudeEnv, prompt } });
    expect(res.statusCode).toBe(201);
    reaper.track(res.json().pid);
    return res.json();
  }
  const parked = (id: string) => waitFor(async () => ((await get(`/coding-sessions/${id}`)).parked ? ofType(id, 'session.parked') : undefined), { timeoutMs: 60_000, what: `${id} parked` });
  /** The session resumed by its timer and took the "continue" to the end of a turn. */
  const resumed = (id: string) =>
    waitFor(
      async () => {
        const all = await events(id);
        const unparked = all.findIndex((e) => e.type === 'session.unparked');
        const ended = all.findIndex((e, i) => i > unparked && e.type === 'session.turn_ended');
        return unparked >= 0 && ended > unparked ? { unparked: all[unparked].data as Json, dispatched: all.find((e, i) => i > unparked && e.type === 'session.message_dispatched')?.data as Json } : undefined;
      },
      { timeoutMs: 90_000, what: `${id} resumed and its turn ended` },
    );

  it('given ten workers parked on one limit, when it resets, then they resume three at a time, each batch a stagger after the one before', async () => {
    t = await startTestApp({ BRAINSTEM_LIMIT_RESUME_BATCH: '3', BRAINSTEM_LIMIT_RESUME_STAGGER_S: '2' });
    const sessions = [];
    for (let i = 0; i < 10; i++) sessions.push(await start('hit the rate limit for 3 s'));
    const parks = await Promise.all(sessions.map((s) => parked(s.id)));
    const resets = parks.map((p) => p[0].resumes_at as number);
    const resumes = await Promise.all(sessions.map((s) => resumed(s.id)));
    expect(resumes.every((r) => r.unparked.by === 'timer' && r.dispatched?.text === CONTINUE_TEXT)).toBe(true);
    // When each resumed (its unparked fact's time), in order: batches of three, a batch not before its stagger (give or
    // take the timer's millisecond).
    const at = (await Promise.all(sessions.map(async (s) => (await events(s.id)).find((e) => e.type === 'session.unparked')!))).map((e) => Date.parse(e.at)).sort((a, b) => a - b);
    expect(at[0]).toBeGreaterThanOrEqual(Math.min(...resets));
    for (let i = 3; i < at.length; i++) expect(at[i] - at[i - 3]).toBeGreaterThanOrEqual(1990);
  });

  it('given a reset already past, or two days away, when the worker parks, then it is clamped (a second, or the most it waits) and the log says so', async () => {
    logger = new CapturedLogger();
    t = await startTestApp({}, { logger });
    const past = await start('hit the rate limit for -30 s');
    const far = await start('hit the rate limit for 172800 s');
    const [p] = await parked(past.id);
    const [f] = await parked(far.id);
    expect(p).toMatchObject({ clamped: 'past', source: 'runtime' });
    expect(p.resumes_at - p.at).toBe(1000);
    expect(f).toMatchObject({ clamped: 'far', source: 'runtime', reported_resets_at: expect.any(Number) });
    expect(f.resumes_at - f.at).toBe(24 * 3_600_000);
    const warned = logger.messages('warn', 'sessions');
    expect(warned).toContainEqual(expect.stringMatching(new RegExp(`^session ${past.alias}: its runtime named a reset already past \\(.+\\): it resumes at .+ instead$`)));
    expect(warned).toContainEqual(expect.stringMatching(new RegExp(`^session ${far.alias}: its runtime named a reset too far away \\(.+\\): it resumes at .+ instead$`)));
    // The one a second away resumes by itself.
    expect((await resumed(past.id)).unparked.by).toBe('timer');
  });

  it("given a profile whose on_limit names a fallback, when its worker parks, then a session under the fallback goes on at once with its task, the parked one is kept parked and linked to it, and the fallback's budget holds", async () => {
    t = await startTestApp();
    const req = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) => {
      const res = await app().inject({ method, url: `/api/v1${url}`, payload });
      return { status: res.statusCode, body: res.json() as Json };
    };
    // The fallback: its sessions may spend 100 tokens each; every fake turn reports 160.
    const fallback = await req('POST', '/agent-profiles', { name: 'Spare account', target_runtime: 'claude-code', budget: { per_session: { tokens: 100 } } });
    expect(fallback.status).toBe(201);
    const main = await req('POST', '/agent-profiles', { name: 'Main account', target_runtime: 'claude-code', on_limit: { fallback_profile: fallback.body.id } });
    expect(main.status).toBe(201);
    expect(main.body.on_limit).toEqual({ fallback_profile: fallback.body.id });
    expect((await req('GET', `/agent-profiles/${main.body.id}/lint`)).body.errors).toEqual([]);
    const env = { ...claudeEnv, FAKE_CLAUDE_USAGE: JSON.stringify({ input_tokens: 100, output_tokens: 60 }) };
    const res = await req('POST', '/coding-sessions', { cwd: cwd.path, runtime: 'claude-code', env, prompt: 'write the parser', profile_id: main.body.id });
    expect(res.status).toBe(201);
    reaper.track(res.body.pid);
    const x = res.body;
    await waitFor(async () => ((await ofType(x.id, 'session.turn_ended')).length >= 1 ? true : undefined), { what: 'its first turn' });
    expect((await req('POST', `/coding-sessions/${x.id}/messages`, { text: 'hit the rate limit' })).status).toBe(200);
    const kept = await waitFor(async () => {
      const s = await get(`/coding-sessions/${x.id}`);
      return s.parked?.source === 'fallback' ? s : undefined;
    }, { what: `${x.alias} kept parked for its fallback` });
    expect(kept.parked).toMatchObject({ reason: 'rate_limit', resumes_at: null, fallback_session_id: expect.stringMatching(/^cs_/) });
    const y = await get(`/coding-sessions/${kept.parked.fallback_session_id}`);
    reaper.track(y.pid);
    expect(y).toMatchObject({ profile_id: fallback.body.id, runtime: 'claude-code', title: `goes on for ${x.alias}` });
    const [task] = await ofType(y.id, 'session.message_dispatched');
    expect(task.text).toContain(`You go on with the work of session ${x.alias}`);
    expect(task.text).toContain('write the parser');
    // Its first turn spends 160 tokens of its profile's 100 a session: held, as any session of that profile is.
    const held = await waitFor(async () => {
      const s = await get(`/coding-sessions/${y.id}`);
      return s.held ? s : undefined;
    }, { what: `${y.alias} held by its profile's budget` });
    expect(held.held).toMatchObject({ reason: 'budget' });
    // The parked one has no timer: it waits for someone to resume it, and started no second fallback.
    expect((await get('/coding-sessions')).sessions.filter((s: Json) => s.profile_id === fallback.body.id)).toHaveLength(1);
  });

  it('given a profile whose on_limit names a profile that does not exist, then its lint says so and a session of it is refused at its start', async () => {
    t = await startTestApp();
    const made = await app().inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: { name: 'Dangling', target_runtime: 'claude-code', on_limit: { fallback_profile: 'no-such-profile' } } });
    expect(made.statusCode).toBe(201);
    const lint = (await app().inject({ method: 'GET', url: `/api/v1/agent-profiles/${made.json().id}/lint` })).json();
    expect(lint.errors).toEqual([expect.objectContaining({ path: 'on_limit.fallback_profile', code: 'on_limit_unknown_profile' })]);
    const bad = await app().inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: { name: 'Bad', target_runtime: 'claude-code', on_limit: { fallback_profile: 'Not An Id' } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('fallback_profile');
    const res = await app().inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, runtime: 'claude-code', env: claudeEnv, prompt: 'x', profile_id: made.json().id } });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'profile_has_errors', message: expect.stringContaining('on_limit.fallback_profile: no profile "no-such-profile"') });
  });

  it('given a worker parked before a restart, when the service starts again, then it resumes at its journaled time, not before', async () => {
    const env = { BRAINSTEM_JOURNAL_DIR: `${data.path}/journal`, BRAINSTEM_PROFILES_DIR: `${data.path}/profiles` };
    t = await startTestApp(env);
    const s = await start('hit the rate limit for 8 s');
    const [p] = await parked(s.id);
    await t.close();
    t = await startTestApp(env);
    const status = await get(`/coding-sessions/${s.id}`);
    expect(status).toMatchObject({ state: 'working', parked: { reason: 'rate_limit', resumes_at: new Date(p.resumes_at).toISOString() } });
    const { unparked, dispatched } = await resumed(s.id);
    expect(unparked.by).toBe('timer');
    expect(unparked.at).toBeGreaterThanOrEqual(p.resumes_at);
    expect(dispatched.text).toBe(CONTINUE_TEXT);
    expect((await get(`/coding-sessions/${s.id}`)).parked).toBeNull();
  });

  it('given a worker whose reset passed while the service was down, when it starts again, then it resumes as soon as its worker is back', async () => {
    const env = { BRAINSTEM_JOURNAL_DIR: `${data.path}/journal-down`, BRAINSTEM_PROFILES_DIR: `${data.path}/profiles-down` };
    t = await startTestApp(env);
    const s = await start('hit the rate limit for 2 s');
    const [p] = await parked(s.id);
    await t.close();
    t = null;
    await waitFor(() => Date.now() > p.resumes_at + 500, { what: 'the reset to pass while the service is down' });
    t = await startTestApp(env);
    const { unparked, dispatched } = await resumed(s.id);
    expect(unparked.by).toBe('timer');
    expect(dispatched.text).toBe(CONTINUE_TEXT);
  });
});
