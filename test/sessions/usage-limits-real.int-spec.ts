import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceHost } from '../../src/config/service-host';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { CONTINUE_TEXT } from '../../src/sessions/session-limit.model';
import { FakeAnthropicApi, MessagesRequest, ModelReply } from '../support/fake-anthropic-api';
import { WORKERS } from '../support/workers';
import { FakeOpenAiApi } from '../support/fake-openai-api';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { AgentHomes, WorkerReaper, stopProcessesOfHome } from '../support/workers';

/**
 * Usage limits with the real CLIs against fake model APIs that refuse with each vendor's usage-limit shape, then answer
 * after the reset: the worker parks (no request reaches the model until the reset), resumes by itself at it, and
 * finishes its turn; a restart while parked resumes it at the journaled time. Opt-in locally (BRAINSTEM_REAL_CLAUDE,
 * BRAINSTEM_REAL_CODEX); CI sets them.
 */
const REAL_CLAUDE = process.env.BRAINSTEM_REAL_CLAUDE;
const REAL_CODEX = process.env.BRAINSTEM_REAL_CODEX;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const get = async (t: TestApp, url: string): Promise<Json> => (await t.inject({ method: 'GET', url: `/api/v1${url}` })).json();
const stream = async (t: TestApp, id: string) => (await t.app.get<Journal>(JOURNAL).readStream(`session-${id}`)).map((e) => ({ type: e.type, data: e.data as Json }));
const parkedNow = (t: TestApp, id: string) =>
  waitFor(async () => {
    const s = await get(t, `/coding-sessions/${id}`);
    return s.parked ? s : undefined;
  }, { timeoutMs: 90_000, what: `${id} parked` });
const answered = (t: TestApp, id: string, result: string, timeoutMs = 120_000) =>
  waitFor(async () => {
    const s = await get(t, `/coding-sessions/${id}`);
    return s.state === 'pending_handling' && (await stream(t, id)).some((e) => e.type === 'session.turn_ended' && e.data.result === result) ? s : undefined;
  }, { timeoutMs, what: `${id} to answer ${result}` });

(REAL_CLAUDE ? describe : describe.skip)('usage limits with a real claude', () => {
  jest.setTimeout(240_000);
  const reaper = new WorkerReaper();
  const dirs = { bin: tempDir('brainstem-limit-bin-'), home: tempDir('brainstem-limit-home-'), cwd: tempDir('brainstem-cwd-'), data: tempDir('brainstem-limit-data-') };
  let api: FakeAnthropicApi;
  /** The reset of the refusal the fake gave (epoch ms, on a whole second: the API says seconds). */
  let resetAt = 0;
  let t: TestApp | null = null;
  let host: ServiceHost;
  /** What the fake model answers: the first request is refused with a reset 3 s away, and any before that reset too. */
  let reply = (n: number, _request: MessagesRequest): ModelReply => {
    if (n === 1) resetAt = Math.ceil((Date.now() + 3000) / 1000) * 1000;
    return Date.now() < resetAt ? { usage_limited: { resets_at: resetAt / 1000, claim: 'five_hour' } } : { text: `reply ${n}` };
  };

  beforeAll(async () => {
    symlinkSync(REAL_CLAUDE!, join(dirs.bin.path, 'claude'));
    // The first request is refused with a reset 3 s away; any before that reset would be refused again.
    api = new FakeAnthropicApi((n, request) => reply(n, request));
    api.releaseAll();
    // A subscription's credential: claude then takes a usage limit as one (no retries of its own) and says when it resets.
    const { ANTHROPIC_API_KEY: _key, ...inherited } = process.env;
    const env = {
      ...inherited,
      PATH: `${dirs.bin.path}:${process.env.PATH}`,
      HOME: dirs.home.path,
      ANTHROPIC_BASE_URL: await api.start(),
      CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-fake',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      MCP_TIMEOUT: '60000',
    };
    host = { env, home: dirs.home.path, cwd: process.cwd() };
  });
  afterEach(async () => {
    reaper.killAll();
    await t?.close();
    t = null;
  });
  afterAll(async () => {
    await api.close();
    await stopProcessesOfHome(dirs.home.path);
    for (const d of Object.values(dirs)) d.remove();
  });

  it('given the API refuses with a usage limit that resets in 3 s, then the worker parks, no request reaches the API before the reset, and it resumes by itself and finishes', async () => {
    t = await startTestApp({ BRAINSTEM_JOURNAL_DIR: join(dirs.data.path, 'park') }, { listen: true, host });
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: dirs.cwd.path, runtime: 'claude-code', prompt: 'build the parser' } });
    expect(res.statusCode).toBe(201);
    const id = res.json().id as string;
    reaper.track(res.json().pid);

    const parked = await parkedNow(t, id);
    expect(parked).toMatchObject({ state: 'working', parked: { reason: 'usage_limit', source: 'runtime', limit_type: 'five_hour', resumes_at: new Date(resetAt).toISOString(), attempt: 1 } });
    // The board's list says it too.
    expect((await get(t, '/coding-sessions')).sessions.find((s: Json) => s.id === id).parked).toMatchObject({ reason: 'usage_limit' });

    const done = await answered(t, id, 'reply 2');
    expect(done.parked).toBeNull();
    // One refused request, then none until the reset: the next one is the resume's, after it.
    expect(api.requests.length).toBe(2);
    expect(api.arrivals[1]).toBeGreaterThanOrEqual(resetAt);
    expect(JSON.stringify(api.requests[1].messages)).toContain(CONTINUE_TEXT);
    const facts = (await stream(t, id)).filter((e) => ['session.parked', 'session.unparked', 'session.message_dispatched', 'session.turn_ended'].includes(e.type));
    expect(facts.map((e) => e.type)).toEqual(['session.message_dispatched', 'session.parked', 'session.unparked', 'session.message_dispatched', 'session.turn_ended']);
    expect(facts[2].data).toMatchObject({ by: 'timer' });
    expect(facts[2].data.at).toBeGreaterThanOrEqual(resetAt);
  });

  it('given a hosted brain its limit refuses, then it parks: no request before the reset, the triggers meanwhile all reach the first round after it, and none is lost', async () => {
    const first = api.requests.length;
    let refusedAt = 0;
    // The brain's first turn (the round supervision starts with) is refused with a reset 5 s away; after it, each round is answered.
    reply = (_n, request) => {
      if (refusedAt === 0) {
        refusedAt = Date.now();
        resetAt = Math.ceil((Date.now() + 5000) / 1000) * 1000;
      }
      if (Date.now() < resetAt) return { usage_limited: { resets_at: resetAt / 1000, claim: 'five_hour' } };
      return { text: JSON.stringify(request.messages).includes('Supervision round') ? 'Looked at every session.' : 'Noted.' };
    };
    t = await startTestApp(
      { BRAINSTEM_JOURNAL_DIR: join(dirs.data.path, 'brain'), BRAINSTEM_MAIN_BRAIN_DRIVER: 'agent', BRAINSTEM_MAIN_BRAIN_RUNTIME: 'claude-code', BRAINSTEM_MAIN_BRAIN_ROUND_TIMEOUT_S: '120' },
      { listen: true, host },
    );
    const app = t;
    const workers: Json[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'command', command: process.execPath, args: [join(WORKERS, 'quiet.js')], cwd: dirs.cwd.path } });
      expect(res.statusCode).toBe(201);
      reaper.track(res.json().pid);
      workers.push(res.json());
    }
    // /supervise: supervision on, and its first round at once.
    expect((await app.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/messages', payload: { text: '/supervise ship it' } })).statusCode).toBe(201);
    const rounds = async () => (await get(app, '/session-os/main-brain/rounds')).rounds as Json[];
    // The first round's turn is refused: the brain parks, and says until when.
    await waitFor(async () => ((await rounds()).some((r) => r.status === 'failed') ? true : undefined), { timeoutMs: 90_000, what: 'the refused round' });
    const parked = await waitFor(async () => (await get(app, '/session-os/main-brain/conversation')).conversation.parked ?? undefined, { what: 'the brain parked' });
    expect(parked).toEqual({ reason: 'usage_limit', resumes_at: new Date(resetAt).toISOString() });
    const notice = (await get(app, '/session-os/main-brain/messages')).messages.find((m: Json) => m.kind === 'notice' && String(m.text).startsWith('The main brain is paused'));
    expect(notice.text).toContain(`until ${new Date(resetAt).toISOString().slice(11, 16)} UTC`);
    // The chat's and the supervision view's banner says it too.
    expect((await get(app, '/session-os/main-brain/presence')).presence.summary).toContain(`paused at its model's usage limit until ${new Date(resetAt).toISOString().slice(11, 16)} UTC`);
    // Triggers during the limit: a question, a block, a turn's end.
    const signal = (w: Json, body: Json) => app.inject({ method: 'POST', url: `/api/v1/coding-sessions/${w.id}/signals`, payload: body });
    expect((await signal(workers[0], { type: 'ask_human', question: 'which region?' })).statusCode).toBe(200);
    expect((await signal(workers[1], { type: 'notify_blocked', reason: 'no credentials' })).statusCode).toBe(200);
    expect((await signal(workers[2], { type: 'report_progress', status: 'needs_review', message: 'PR ready' })).statusCode).toBe(200);
    const done = await waitFor(async () => (await rounds()).find((r) => r.status === 'completed'), { timeoutMs: 120_000, what: 'a round after the reset' });
    // No round started before the reset, and the first after it names every session that waited.
    const all = await rounds();
    expect(all.filter((r) => r.status !== 'failed' && Date.parse(r.started_at) < resetAt)).toEqual([]);
    expect(done.summary).toBe('Looked at every session.');
    expect(done.reasons.map((r: Json) => r.session_id).sort()).toEqual(expect.arrayContaining(workers.map((w) => w.id).sort()));
    expect(done.reasons.map((r: Json) => r.trigger)).toContain('initial');
    // The refused request, then none until the reset.
    const arrivals = api.arrivals.slice(first);
    expect(arrivals.filter((a) => a > refusedAt && a < resetAt)).toEqual([]);
    expect((await get(app, '/session-os/main-brain/conversation')).conversation.parked).toBeNull();
  });
});

(REAL_CODEX ? describe : describe.skip)('usage limits with a real codex', () => {
  jest.setTimeout(240_000);
  const homes = new AgentHomes();
  const bin = tempDir('brainstem-codex-bin-');
  const cwd = tempDir('brainstem-cwd-');
  const data = tempDir('brainstem-limit-data-');
  let api: FakeOpenAiApi;
  let t: TestApp | null = null;

  beforeAll(() => {
    symlinkSync(REAL_CODEX!, join(bin.path, 'codex'));
  });
  afterEach(async () => {
    await t?.close();
    t = null;
    homes.cleanUp();
    await api?.close();
  });
  afterAll(() => {
    for (const d of [bin, cwd, data]) d.remove();
  });

  /**
   * codex names a plan's reset to the minute ("try again at 4:05 PM"), so Brainstem waits for that minute's end: the
   * fake's reset is 3 s away, and its minute ends within the next 60 s.
   */
  it('given the API refuses with a plan usage limit, then the worker parks until the minute codex names ends, no request reaches the API before, and it resumes its thread and finishes', async () => {
    let resetAt = 0;
    api = new FakeOpenAiApi(0, (n) => {
      if (n === 1) resetAt = Math.ceil((Date.now() + 3000) / 1000) * 1000;
      return Date.now() < resetAt ? { usage_limited: { resets_at: resetAt / 1000 } } : { text: `reply ${n}` };
    });
    const home = homes.create('brainstem-codex-home-');
    writeFileSync(join(home, 'config.toml'), `model_provider = "fake"\n[model_providers.fake]\nname = "fake"\nbase_url = "${await api.start()}"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n`);
    t = await startTestApp({ BRAINSTEM_JOURNAL_DIR: join(data.path, 'park'), BRAINSTEM_AUTH: 'off' }, { listen: true });
    const env = { PATH: `${bin.path}:${process.env.PATH}`, CODEX_HOME: home, OPENAI_API_KEY: 'sk-fake' };
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, runtime: 'codex', env, prompt: 'build the parser', args: ['--skip-git-repo-check'] } });
    expect(res.statusCode).toBe(201);
    const id = res.json().id as string;

    const parked = await parkedNow(t, id);
    const minuteEnd = Math.floor(resetAt / 60_000) * 60_000 + 60_000;
    expect(parked).toMatchObject({ state: 'working', parked: { reason: 'usage_limit', source: 'runtime', resumes_at: new Date(minuteEnd).toISOString() } });

    const done = await answered(t, id, 'reply 2', 150_000);
    expect(done.parked).toBeNull();
    expect(api.requests.length).toBe(2);
    expect(api.arrivals[1]).toBeGreaterThanOrEqual(minuteEnd);
    // Resumed in its thread: the refused prompt is there, then the "continue".
    const input = JSON.stringify(api.requests[1].input);
    expect(input).toContain('build the parser');
    expect(input).toContain(CONTINUE_TEXT);
  });
});
