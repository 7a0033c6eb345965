import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceHost } from '../../src/config/service-host';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { AnthropicUsage, FakeAnthropicApi } from '../support/fake-anthropic-api';
import { FakeOpenAiApi, OpenAiUsage } from '../support/fake-openai-api';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { AgentHomes, WorkerReaper, stopProcessesOfHome } from '../support/workers';

/**
 * Usage and budgets with the real CLIs against fake model APIs that report usage: the totals Brainstem keeps are the sums
 * the fake reported; a budget holds the worker after the turn that crosses it, and the fake gets no request from it until
 * the budget is raised; a restart keeps the totals; the hosted brain's usage is counted. Opt-in locally
 * (BRAINSTEM_REAL_CLAUDE, BRAINSTEM_REAL_CODEX); CI sets them.
 */
const REAL_CLAUDE = process.env.BRAINSTEM_REAL_CLAUDE;
const REAL_CODEX = process.env.BRAINSTEM_REAL_CODEX;

type Json = Record<string, any>;

/** What a fake reported, summed, in Brainstem's four kinds. */
interface Sums {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}
const anthropicSums = (usages: AnthropicUsage[]): Sums =>
  usages.reduce<Sums>(
    (s, u) => ({
      input_tokens: s.input_tokens + u.input_tokens,
      output_tokens: s.output_tokens + u.output_tokens,
      cache_read_tokens: s.cache_read_tokens + (u.cache_read_input_tokens ?? 0),
      cache_write_tokens: s.cache_write_tokens + (u.cache_creation_input_tokens ?? 0),
    }),
    { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 },
  );
/** OpenAI counts the cached tokens inside the input; Brainstem apart. */
const openAiSums = (usages: OpenAiUsage[]): Sums =>
  usages.reduce<Sums>(
    (s, u) => ({
      input_tokens: s.input_tokens + u.input_tokens - (u.cached_tokens ?? 0),
      output_tokens: s.output_tokens + u.output_tokens,
      cache_read_tokens: s.cache_read_tokens + (u.cached_tokens ?? 0),
      cache_write_tokens: s.cache_write_tokens,
    }),
    { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 },
  );

async function get(t: TestApp, url: string): Promise<Json> {
  return (await t.inject({ method: 'GET', url: `/api/v1${url}` })).json();
}
const turnsEnded = async (t: TestApp, id: string) => (await t.app.get<Journal>(JOURNAL).readStream(`session-${id}`)).filter((e) => e.type === 'session.turn_ended').length;
const idleAfter = (t: TestApp, id: string, turns: number) =>
  waitFor(async () => {
    const s = await get(t, `/coding-sessions/${id}`);
    return s.state === 'pending_handling' && (await turnsEnded(t, id)) >= turns ? s : undefined;
  }, { timeoutMs: 90_000, what: `${turns} turn(s) of ${id}` });
const heldNow = (t: TestApp, id: string) =>
  waitFor(async () => {
    const s = await get(t, `/coding-sessions/${id}`);
    return s.held ? s : undefined;
  }, { timeoutMs: 90_000, what: `${id} held` });

(REAL_CLAUDE ? describe : describe.skip)('usage with a real claude', () => {
  jest.setTimeout(240_000);
  const reaper = new WorkerReaper();
  const dirs = { bin: tempDir('brainstem-usage-bin-'), home: tempDir('brainstem-usage-home-'), cwd: tempDir('brainstem-cwd-'), data: tempDir('brainstem-usage-data-') };
  let api: FakeAnthropicApi;
  /** What the fake reported for each request, in order. */
  const reported: AnthropicUsage[] = [];
  let host: ServiceHost;
  let t: TestApp | null = null;

  beforeAll(async () => {
    symlinkSync(REAL_CLAUDE!, join(dirs.bin.path, 'claude'));
    api = new FakeAnthropicApi((n) => ({ text: `reply ${n}` }));
    // A different count each request, so a sum that missed or doubled one could not come out right.
    api.usage = (n) => {
      const u = { input_tokens: 100 + n, output_tokens: 20 + n, cache_read_input_tokens: 30, cache_creation_input_tokens: 10 };
      reported[n - 1] = u;
      return u;
    };
    api.releaseAll();
    const env = {
      ...process.env,
      PATH: `${dirs.bin.path}:${process.env.PATH}`,
      HOME: dirs.home.path,
      ANTHROPIC_BASE_URL: await api.start(),
      ANTHROPIC_API_KEY: 'sk-ant-fake',
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

  const start = async (journal: string, env: Record<string, string> = {}): Promise<TestApp> => {
    t = await startTestApp({ BRAINSTEM_JOURNAL_DIR: journal, ...env }, { listen: true, host });
    return t;
  };
  async function session(app: TestApp, body: object): Promise<Json> {
    const res = await app.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: dirs.cwd.path, runtime: 'claude-code', ...body } });
    expect(res.statusCode).toBe(201);
    reaper.track(res.json().pid);
    return res.json();
  }

  it('given two turns, then the session totals are the sums the fake API reported, and a restart keeps them from the journal', async () => {
    const journal = join(dirs.data.path, 'totals');
    const app = await start(journal);
    const from = api.requests.length;
    const s = await session(app, { prompt: 'first' });
    await idleAfter(app, s.id, 1);
    await app.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/messages`, payload: { text: 'second' } });
    const status = await idleAfter(app, s.id, 2);
    const sums = anthropicSums(reported.slice(from, api.requests.length));
    expect(status.usage).toMatchObject({ turns: 2, ...sums, cost_estimated: false });
    // claude prices its calls itself: what it said, summed.
    expect(status.usage.cost_usd).toBeGreaterThan(0);
    const row = (await get(app, '/usage?group_by=session')).rows.find((r: Json) => r.session_id === s.id);
    expect(row).toMatchObject({ ...sums, cost_usd: status.usage.cost_usd });
    await app.close();
    t = null;
    reaper.killAll();

    const again = await start(journal);
    expect((await get(again, `/coding-sessions/${s.id}`)).usage).toEqual(status.usage);
    expect((await get(again, '/usage?group_by=session')).rows.find((r: Json) => r.session_id === s.id)).toEqual(row);
  });

  it('given a budget of tokens, then the turn that crosses it holds the worker, the fake API gets no request from it, and raising the budget releases it', async () => {
    const app = await start(join(dirs.data.path, 'budget'));
    const from = api.requests.length;
    // Each turn is one request of about 165 tokens: the second crosses 250.
    const s = await session(app, { prompt: 'first', budget: { tokens: 250 } });
    await idleAfter(app, s.id, 1);
    expect((await get(app, `/coding-sessions/${s.id}`)).held).toBeNull();
    await app.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/messages`, payload: { text: 'second' } });
    const held = await heldNow(app, s.id);
    expect(held.held).toMatchObject({ reason: 'budget' });
    expect(held.usage.tokens).toBeGreaterThanOrEqual(250);
    const requestsWhenHeld = api.requests.length;
    expect(requestsWhenHeld - from).toBe(2);
    const refused = await app.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/messages`, payload: { text: 'refused while held' } });
    expect(refused.json()).toMatchObject({ code: 'session_held' });
    const raised = await app.inject({ method: 'PATCH', url: `/api/v1/coding-sessions/${s.id}/budget`, payload: { tokens: 10_000 } });
    expect(raised.json()).toMatchObject({ held: null, budget: { tokens: 10_000 } });
    await app.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/messages`, payload: { text: 'third' } });
    await idleAfter(app, s.id, 3);
    // Nothing reached the model between the hold and the raise: the next request is the third turn's, and the
    // message refused while held never reached claude.
    expect(api.requests.length).toBe(requestsWhenHeld + 1);
    const next = JSON.stringify(api.requests[requestsWhenHeld].messages);
    expect(next).toContain('third');
    expect(next).not.toContain('refused while held');
  });

  it("given the hosted brain on claude, then its turns' usage is counted: the brain's totals are the sums the fake reported", async () => {
    const app = await start(join(dirs.data.path, 'brain'), { BRAINSTEM_MAIN_BRAIN_DRIVER: 'agent', BRAINSTEM_MAIN_BRAIN_RUNTIME: 'claude-code' });
    const from = api.requests.length;
    await app.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/messages', payload: { text: 'hello brain' } });
    const turnDone = () =>
      waitFor(async () => {
        const c = (await get(app, '/session-os/main-brain/conversation')).conversation;
        return c.turns >= 1 && c.turn_in_flight === null ? c : undefined;
      }, { timeoutMs: 90_000, what: "the brain's turn to end" });
    await turnDone();
    const brain = await waitFor(async () => {
      const r = await get(app, '/usage?group_by=brain');
      return r.rows.length > 0 ? r : undefined;
    }, { what: "the brain's usage" });
    const sums = anthropicSums(reported.slice(from, api.requests.length));
    expect(brain.rows).toEqual([expect.objectContaining({ runtime: 'claude-code', turns: 1, ...sums, cost_estimated: false })]);
    const events = (await app.app.get<Journal>(JOURNAL).readStream('main-brain')).filter((e) => e.type === 'brain.usage');
    expect(events.length).toBeGreaterThan(0);
    const day = (await get(app, '/usage?group_by=day')).rows[0];
    expect(day.brain).toMatchObject(sums);
  });
});

(REAL_CODEX ? describe : describe.skip)('usage with a real codex', () => {
  jest.setTimeout(240_000);
  const homes = new AgentHomes();
  const bin = tempDir('brainstem-codex-bin-');
  const cwd = tempDir('brainstem-cwd-');
  const data = tempDir('brainstem-usage-data-');
  let api: FakeOpenAiApi;
  const reported: OpenAiUsage[] = [];
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

  async function codexSession(app: TestApp, body: object): Promise<Json> {
    api = new FakeOpenAiApi(0);
    api.usage = (n) => {
      const u = { input_tokens: 100 + n, cached_tokens: 40, output_tokens: 20 + n };
      reported[n - 1] = u;
      return u;
    };
    const home = homes.create('brainstem-codex-home-');
    const provider = `model_provider = "fake"\n[model_providers.fake]\nname = "fake"\nbase_url = "${await api.start()}"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n`;
    writeFileSync(join(home, 'config.toml'), provider);
    const env = { PATH: `${bin.path}:${process.env.PATH}`, CODEX_HOME: home, OPENAI_API_KEY: 'sk-fake' };
    const res = await app.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, runtime: 'codex', env, prompt: 'first', args: ['--skip-git-repo-check', '-m', 'gpt-5'], ...body } });
    expect(res.statusCode).toBe(201);
    return res.json();
  }

  it('given two turns, then the totals are the sums the fake reported, priced from the table (codex says no cost), and a restart keeps them', async () => {
    const journal = join(data.path, 'totals');
    t = await startTestApp({ BRAINSTEM_JOURNAL_DIR: journal, BRAINSTEM_AUTH: 'off' }, { listen: true });
    const s = await codexSession(t, {});
    await idleAfter(t, s.id, 1);
    await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/messages`, payload: { text: 'second' } });
    const status = await idleAfter(t, s.id, 2);
    const sums = openAiSums(reported.slice(0, api.requests.length));
    expect(status.usage).toMatchObject({ turns: 2, ...sums, cost_estimated: true });
    // gpt-5 in config/default.yaml: $1.25 input, $0.125 cached, $10 output per million tokens.
    const cost = (sums.input_tokens * 1.25 + sums.cache_read_tokens * 0.125 + sums.output_tokens * 10) / 1e6;
    expect(status.usage.cost_usd).toBeCloseTo(cost, 10);
    expect((await t.app.get<Journal>(JOURNAL).readStream(`session-${s.id}`)).filter((e) => e.type === 'session.usage').map((e) => (e.data as Json).model)).toEqual(['gpt-5', 'gpt-5']);
    await t.close();
    t = await startTestApp({ BRAINSTEM_JOURNAL_DIR: journal, BRAINSTEM_AUTH: 'off' }, { listen: true });
    expect((await get(t, `/coding-sessions/${s.id}`)).usage).toEqual(status.usage);
  });

  it('given a budget of tokens, then the turn that crosses it holds the worker and the fake API gets no request from it until it is raised', async () => {
    reported.length = 0;
    t = await startTestApp({ BRAINSTEM_JOURNAL_DIR: join(data.path, 'budget'), BRAINSTEM_AUTH: 'off' }, { listen: true });
    // About 125 tokens a turn: the second crosses 200.
    const s = await codexSession(t, { budget: { tokens: 200 } });
    await idleAfter(t, s.id, 1);
    await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/messages`, payload: { text: 'second' } });
    const held = await heldNow(t, s.id);
    expect(held.held).toMatchObject({ reason: 'budget' });
    expect(api.requests.length).toBe(2);
    expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/messages`, payload: { text: 'refused while held' } })).json()).toMatchObject({ code: 'session_held' });
    expect((await t.inject({ method: 'PATCH', url: `/api/v1/coding-sessions/${s.id}/budget`, payload: { tokens: 10_000 } })).json()).toMatchObject({ held: null });
    await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/messages`, payload: { text: 'third' } });
    await idleAfter(t, s.id, 3);
    expect(api.requests.length).toBe(3);
    expect(JSON.stringify(api.requests[2].input)).toContain('third');
    expect(JSON.stringify(api.requests[2].input)).not.toContain('refused while held');
  });
});
