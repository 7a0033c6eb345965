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
});
