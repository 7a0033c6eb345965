import { readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ServiceHost } from '../../src/config/service-host';
import { BrainHost } from '../../src/main-brain/agent/brain-host';
import { BRAIN_HOST } from '../../src/main-brain/main-brain.tokens';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { ROUND_GUIDE } from '../../src/supervision/round-prompt';
import { FakeAnthropicApi, MessagesRequest, ModelReply } from '../support/fake-anthropic-api';
import { openSse } from '../support/sse';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper, stopProcessesOfHome } from '../support/workers';

/**
 * The hosted main brain on a real `claude` against a fake Anthropic API: one conversation across chat turns, rounds and
 * a restart; its text streamed to the chat; its Brainstem tools reached over MCP with its own credential; its gated
 * calls held for the user. Opt-in locally (BRAINSTEM_REAL_CLAUDE); CI sets it (.ci/real-clis).
 */
const REAL_CLAUDE = process.env.BRAINSTEM_REAL_CLAUDE;
const BASE = '/api/v1/session-os/main-brain';

type Json = Record<string, unknown>;

/** The text of a request's last user message: its text blocks, or a marker for tool results. */
function lastUserText(request: MessagesRequest): string {
  const last = (request.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user').pop()!;
  if (typeof last.content === 'string') return last.content;
  const blocks = Array.isArray(last.content) ? (last.content as Json[]) : [];
  if (blocks.some((b) => b.type === 'tool_result')) return `TOOL_RESULT ${JSON.stringify(blocks.filter((b) => b.type === 'tool_result'))}`;
  return blocks.map((b) => (typeof b.text === 'string' ? b.text : '')).join('\n');
}

(REAL_CLAUDE ? describe : describe.skip)('the hosted main brain on a real claude', () => {
  // Each test starts a service and a claude (twice for the restart): generous on a small shared machine.
  jest.setTimeout(240_000);
  const reaper = new WorkerReaper();
  const dirs = { bin: tempDir('brainstem-brain-bin-'), home: tempDir('brainstem-brain-home-'), data: tempDir('brainstem-brain-data-') };
  let api: FakeAnthropicApi;
  /** What the service runs in: the brain's claude inherits its environment, which points it at the fake API. */
  let host: ServiceHost;
  let t: TestApp | null = null;
  /** What the model does when the brain's turn carries `marker` (the last user text contains it). */
  let script: Array<[string, (request: MessagesRequest) => ModelReply]> = [];

  beforeAll(async () => {
    symlinkSync(REAL_CLAUDE!, join(dirs.bin.path, 'claude'));
    api = new FakeAnthropicApi((_n, request) => {
      const text = lastUserText(request);
      const found = script.find(([marker]) => text.includes(marker));
      return found ? found[1](request) : { text: 'Noted.' };
    });
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
  /** Where this test's model requests begin. */
  let firstRequest = 0;
  beforeEach(() => {
    firstRequest = api.requests.length;
  });
  afterEach(async () => {
    api.releaseAll();
    reaper.killAll();
    await t?.close();
    t = null;
  });
  afterAll(async () => {
    await api.close();
    // The services have closed: a brain's claude still writing into the home is stopped before it is removed.
    await stopProcessesOfHome(dirs.home.path);
    for (const d of Object.values(dirs)) d.remove();
  });

  /** The service with the hosted brain on claude, on a journal that outlives it (for the restart). */
  const start = async (journal = join(dirs.data.path, `j-${Date.now()}`)): Promise<{ t: TestApp; journal: string }> => {
    t = await startTestApp(
      { BRAINSTEM_MAIN_BRAIN_DRIVER: 'agent', BRAINSTEM_MAIN_BRAIN_RUNTIME: 'claude-code', BRAINSTEM_JOURNAL_DIR: journal, BRAINSTEM_MAIN_BRAIN_ROUND_TIMEOUT_S: '120' },
      { listen: true, host },
    );
    return { t, journal };
  };
  const say = async (app: TestApp, text: string, extra: Json = {}) => {
    const res = await app.inject({ method: 'POST', url: `${BASE}/messages`, payload: { text, ...extra } });
    expect(res.statusCode).toBe(201);
    return res.json().message as Json;
  };
  const chat = async (app: TestApp) => (await app.inject({ method: 'GET', url: `${BASE}/messages` })).json().messages as Json[];
  const brainSays = async (app: TestApp, text: string) => waitFor(async () => (await chat(app)).find((m) => m.role === 'brain' && m.kind === 'message' && m.text === text), { timeoutMs: 90_000 });
  const conversation = async (app: TestApp) => (await app.inject({ method: 'GET', url: `${BASE}/conversation` })).json().conversation as Json;
  /** The model requests of the brain's conversation (claude's side requests carry no tools). */
  const brainRequests = () => api.requests.slice(firstRequest).filter((r) => (r.tools ?? []).length > 0);

  it('answers a chat message with a streamed reply, and the next message reaches the model with the earlier exchange', async () => {
    script = [
      ['hello brain', () => ({ text: 'Hi, I am the main brain.' })],
      ['second message', () => ({ text: 'Still here.' })],
    ];
    const { t: app } = await start();
    const sse = await openSse(`${app.url}${BASE}/messages/stream`, app.auth());
    try {
      await say(app, 'hello brain');
      await brainSays(app, 'Hi, I am the main brain.');
      const streamed = await sse.take(4, 30_000);
      expect(streamed.find((e) => e.event === 'chat.delta')?.data).toContain('Hi, I am the main brain.');
      expect(streamed.filter((e) => e.event === 'chat.message').map((e) => (JSON.parse(e.data) as { data: Json }).data.role)).toEqual(['user', 'brain']);
    } finally {
      sse.close();
    }
    const before = brainRequests().length;
    await say(app, 'second message');
    await brainSays(app, 'Still here.');
    const second = brainRequests().slice(before).find((r) => lastUserText(r).includes('second message'))!;
    expect(JSON.stringify(second.messages)).toContain('hello brain');
    expect(JSON.stringify(second.messages)).toContain('Hi, I am the main brain.');
    expect(second.tools!.map((tool) => tool.name)).toEqual(expect.arrayContaining(['mcp__brainstem__send_to_session', 'mcp__brainstem__complete_round']));
    // The reply is posted as it comes; the turn's end is journaled just after it.
    await waitFor(async () => (await conversation(app)).turn_in_flight === null);
    expect(await conversation(app)).toMatchObject({ runtime: 'claude-code', turns: 2, turn_in_flight: null });
    // Hosted here: this node holds the (embedded) lease and runs the conversation.
    expect((await app.inject({ method: 'GET', url: '/api/v1/ready' })).json().brain).toEqual({ driver: 'agent', hosted: true, runtime: 'claude-code', connected: true });
    // Who reads the messages: this claude, by its version and its conversation (no notice was posted for either message).
    const { conversation_id } = await conversation(app);
    const presence = await waitFor(async () => {
      const p = (await app.inject({ method: 'GET', url: `${BASE}/presence` })).json().presence as Json;
      return p.version !== null ? p : undefined;
    }, { what: "the runtime's version, read at start" });
    expect(presence).toMatchObject({ connected: true, driver: 'agent', hosted: true, runtime: 'claude-code', version: expect.stringMatching(/^\d+\.\d+\.\d+$/), conversation_id, node: 'local', how_to_connect: null });
    expect(presence.summary).toBe(`The hosted brain reads the messages: claude-code ${String(presence.version)} on this node, conversation ${String(conversation_id)}.`);
    expect((await chat(app)).filter((m) => m.kind === 'notice')).toEqual([]);
  });

  it('wakes a round in the same conversation; the brain unblocks the worker through send_to_session, and its last words are the summary', async () => {
    let workerId = '';
    script = [
      ['chat before the round', () => ({ text: 'Ready to supervise.' })],
      ['Supervision round', () => ({ tool: 'mcp__brainstem__send_to_session', input: { session: workerId, text: 'build it' } })],
      ['TOOL_RESULT', () => ({ text: 'Told the worker to build it.' })],
    ];
    const { t: app } = await start();
    await say(app, 'chat before the round');
    await brainSays(app, 'Ready to supervise.');
    const worker = await app.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'report.js')], cwd: tmpdir() } });
    expect(worker.statusCode).toBe(201);
    workerId = worker.json().id;
    reaper.track(worker.json().pid);
    await say(app, '/supervise build the thing');
    const round = await waitFor(
      async () => ((await app.inject({ method: 'GET', url: `${BASE}/rounds` })).json().rounds as Json[]).find((r) => r.status === 'completed'),
      { timeoutMs: 90_000 },
    );
    expect(round.summary).toBe('Told the worker to build it.');
    const output = await waitFor(async () => {
      const res = await app.inject({ method: 'GET', url: `/api/v1/coding-sessions/${workerId}/output` });
      return JSON.stringify(res.json()).includes('got: build it') ? (res.json() as Json) : undefined;
    });
    expect(JSON.stringify(output)).toContain('got: build it');
    const roundRequest = brainRequests().find((r) => lastUserText(r).includes('Supervision round'))!;
    expect(JSON.stringify(roundRequest.messages)).toContain('chat before the round');
    expect((await chat(app)).some((m) => m.kind === 'activity' && String(m.text).startsWith('→ send_to_session'))).toBe(true);
  });

  it('resumes the same conversation after a restart', async () => {
    script = [
      ['before the restart', () => ({ text: 'Remember the word marmalade.' })],
      ['after the restart', () => ({ text: 'The word was marmalade.' })],
    ];
    const first = await start();
    await say(first.t, 'before the restart');
    await brainSays(first.t, 'Remember the word marmalade.');
    // Stopped between turns (a turn still running at shutdown is cut off, and claude may not have kept its answer).
    const { conversation_id: id } = await waitFor(async () => {
      const c = await conversation(first.t);
      return c.turn_in_flight === null ? c : undefined;
    });
    expect(typeof id).toBe('string');
    await first.t.app.close();
    t = null;
    const { t: again } = await start(first.journal);
    await say(again, 'after the restart');
    await brainSays(again, 'The word was marmalade.');
    const resumed = brainRequests().find((r) => lastUserText(r).includes('after the restart'))!;
    expect(JSON.stringify(resumed.messages)).toContain('Remember the word marmalade.');
    // One conversation in the journal: the restart resumed it rather than starting another (claude may name the
    // continued transcript anew; the new name is journaled and resumed next).
    const journal = again.app.get<Journal>(JOURNAL);
    const brainEvents = await journal.readStream('main-brain');
    expect(brainEvents.filter((e) => e.type === 'brain.conversation_started')).toHaveLength(1);
    const ids = brainEvents.filter((e) => e.type === 'brain.conversation_identified').map((e) => (e.data as Json).conversation_id);
    expect(ids[0]).toBe(id);
    expect((await conversation(again)).conversation_id).toBe(ids[ids.length - 1]);
  });

  it('after a restart, sends the next round as what changed since the round the conversation answered before it', async () => {
    script = [
      ['Supervision round', () => ({ text: 'Round read.' })],
      ['before the restart', () => ({ text: 'Noted.' })],
    ];
    const first = await start();
    const quiet = async (app: TestApp) => {
      const w = await app.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: tmpdir() } });
      reaper.track(w.json().pid);
      return w.json() as Json;
    };
    const a = await quiet(first.t);
    await say(first.t, '/supervise keep them going');
    await waitFor(async () => ((await first.t.inject({ method: 'GET', url: `${BASE}/rounds` })).json().rounds as Json[]).find((r) => r.status === 'completed'), { timeoutMs: 90_000 });
    await waitFor(async () => ((await conversation(first.t)).turn_in_flight === null ? true : undefined));
    await first.t.app.close();
    t = null;
    const { t: again } = await start(first.journal);
    const b = await quiet(again);
    expect((await again.inject({ method: 'POST', url: `/api/v1/coding-sessions/${String(b.id)}/signals`, payload: { type: 'ask_human', question: 'which region?' } })).statusCode).toBe(200);
    const second = await waitFor(
      async () => ((await again.inject({ method: 'GET', url: `${BASE}/rounds` })).json().rounds as Json[]).find((r) => (r.reasons as Json[]).some((x) => x.session_id === b.id)),
      { timeoutMs: 90_000 },
    );
    const sent = await waitFor(() => brainRequests().map(lastUserText).find((x) => x.includes(String(second.id))), { timeoutMs: 90_000 });
    // The conversation read the guide and the round before the restart: this one comes as a delta of it.
    expect(sent).not.toContain(ROUND_GUIDE);
    expect(sent).not.toContain('Your turn ends the round');
    expect(String(second.prompt)).toContain(`  ${String(a.alias)} (${String(a.id)}) working since`);
    expect(sent).not.toContain(`  ${String(a.alias)} (${String(a.id)}) working since`);
    expect(sent).toContain('(1 other session as in the round before)');
  });

  it('is hosted again in the same process once its node holds the supervisor lease again, in the same conversation', async () => {
    script = [
      ['before the lease was lost', () => ({ text: 'Remember the word quince.' })],
      ['after the lease came back', () => ({ text: 'The word was quince.' })],
    ];
    const { t: app } = await start();
    await say(app, 'before the lease was lost');
    await brainSays(app, 'Remember the word quince.');
    await waitFor(async () => ((await conversation(app)).turn_in_flight === null ? true : undefined));
    // What MainBrainModule does when the lease is lost, then held again.
    const host = app.app.get<BrainHost | null>(BRAIN_HOST) as BrainHost;
    await host.stop();
    await host.start();
    await say(app, 'after the lease came back');
    await brainSays(app, 'The word was quince.');
    const again = brainRequests().find((r) => lastUserText(r).includes('after the lease came back'))!;
    expect(JSON.stringify(again.messages)).toContain('Remember the word quince.');
    const brainEvents = await app.app.get<Journal>(JOURNAL).readStream('main-brain');
    expect(brainEvents.filter((e) => e.type === 'brain.conversation_started')).toHaveLength(1);
  });

  it("holds the brain's stop_session for the user, and runs it once the user confirms", async () => {
    let workerId = '';
    script = [
      ['please stop the worker', () => ({ tool: 'mcp__brainstem__stop_session', input: { session: workerId } })],
      ['TOOL_RESULT', () => ({ text: 'Asked you to confirm the stop.' })],
    ];
    const { t: app } = await start();
    const worker = await app.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: tmpdir() } });
    workerId = worker.json().id;
    reaper.track(worker.json().pid);
    await say(app, 'please stop the worker');
    await brainSays(app, 'Asked you to confirm the stop.');
    const pending = (await app.inject({ method: 'GET', url: `${BASE}/confirmations?status=pending` })).json().confirmations as Json[];
    expect(pending.map((c) => [c.tool, (c.args as Json).session])).toEqual([['stop_session', workerId]]);
    expect((await app.inject({ method: 'GET', url: `/api/v1/coding-sessions/${workerId}` })).json().state).not.toBe('exited');
    const toolResult = brainRequests().map(lastUserText).find((x) => x.startsWith('TOOL_RESULT'))!;
    expect(toolResult).toContain('waiting_for_user');
    expect((await app.inject({ method: 'POST', url: `${BASE}/confirmations/${String(pending[0].id)}/confirm` })).statusCode).toBe(200);
    await waitFor(async () => (await app.inject({ method: 'GET', url: `/api/v1/coding-sessions/${workerId}` })).json().state === 'exited');
  });

  const brainEvents = async (app: TestApp, type: string) =>
    (await app.app.get<Journal>(JOURNAL).readStream('main-brain')).filter((e) => e.type === type).map((e) => e.data as Json);

  it('merges messages that arrive during a turn into the next turn, losing none', async () => {
    script = [
      ['held turn', () => ({ text: 'Answered the first.' })],
      ['merged one', () => ({ text: 'Answered both.' })],
    ];
    const { t: app } = await start();
    api.hold();
    await say(app, 'held turn');
    await waitFor(() => brainRequests().some((r) => lastUserText(r).includes('held turn')), { timeoutMs: 90_000 });
    const one = await say(app, 'merged one');
    const two = await say(app, 'merged two');
    api.releaseAll();
    await brainSays(app, 'Answered both.');
    const merged = brainRequests().filter((r) => lastUserText(r).includes('merged one'));
    expect(merged).toHaveLength(1);
    expect(lastUserText(merged[0])).toContain('merged two');
    const turns = await brainEvents(app, 'brain.turn_started');
    expect(turns.map((e) => e.chat_seqs)).toEqual([[expect.any(Number)], [one.seq, two.seq]]);
  });

  it('fails the round when the brain process dies mid-turn, and the next message resumes the conversation', async () => {
    script = [
      ['chat first', () => ({ text: 'Ready.' })],
      ['Supervision round', () => ({ text: 'never sent' })],
      ['after the crash', () => ({ text: 'Back again.' })],
    ];
    const { t: app } = await start();
    await say(app, 'chat first');
    await brainSays(app, 'Ready.');
    const worker = await app.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: tmpdir() } });
    reaper.track(worker.json().pid);
    api.hold();
    await say(app, '/supervise watch it');
    await waitFor(() => brainRequests().some((r) => lastUserText(r).includes('Supervision round')), { timeoutMs: 90_000 });
    const { pid, conversation_id: before } = await conversation(app);
    process.kill(-(pid as number), 'SIGKILL');
    const failed = await waitFor(async () => ((await app.inject({ method: 'GET', url: `${BASE}/rounds` })).json().rounds as Json[]).find((r) => r.status === 'failed'), { timeoutMs: 60_000 });
    expect(String(failed.failure)).toContain('claude exited with SIGKILL mid-turn');
    expect((await chat(app)).some((m) => m.kind === 'notice' && String(m.text).startsWith("The main brain's turn failed: claude exited with SIGKILL"))).toBe(true);
    api.releaseAll();
    await say(app, 'after the crash');
    await brainSays(app, 'Back again.');
    const resumed = brainRequests().find((r) => lastUserText(r).includes('after the crash'))!;
    expect(JSON.stringify(resumed.messages)).toContain('chat first');
    expect((await brainEvents(app, 'brain.conversation_identified'))[0].conversation_id).toBe(before);
    expect(await brainEvents(app, 'brain.conversation_started')).toHaveLength(1);
  });

  it('starts a new conversation seeded with the kept summary when the context is full, and says so in the chat', async () => {
    let refused = false;
    script = [
      ['Brainstem starts a new conversation with you', () => ({ text: 'Fresh start.' })],
      [
        'too much context',
        () => {
          if (refused) return { text: 'unexpected' };
          refused = true;
          return { refuse: 'prompt is too long: 250000 tokens > 200000 maximum' };
        },
      ],
    ];
    const { t: app } = await start();
    await say(app, 'too much context');
    await brainSays(app, 'Fresh start.');
    const started = await brainEvents(app, 'brain.conversation_started');
    expect(started.map((e) => e.reason)).toEqual(['first', 'context_full']);
    expect(String(started[1].summary)).toContain('Goal: (none set)');
    const seeded = brainRequests().find((r) => lastUserText(r).includes('Brainstem starts a new conversation with you'))!;
    expect(lastUserText(seeded)).toContain('too much context');
    expect(JSON.stringify(seeded.messages)).not.toContain('250000 tokens');
    expect((await chat(app)).some((m) => m.kind === 'notice' && String(m.text).includes("conversation's context was full"))).toBe(true);
  });

  it('posts a model API error to the chat', async () => {
    script = [['refuse me', () => ({ refuse: 'the fake API refuses this request' })]];
    const { t: app } = await start();
    await say(app, 'refuse me');
    const notice = await waitFor(async () => (await chat(app)).find((m) => m.kind === 'notice' && String(m.text).startsWith("The main brain's model API failed")), { timeoutMs: 90_000 });
    expect(notice.text).toContain('the fake API refuses this request');
  });

  it("asks the user before the brain's runtime uses a tool the profile does not allow up front", async () => {
    script = [
      ['read the hostname', () => ({ tool: 'Read', input: { file_path: '/etc/hostname' } })],
      ['TOOL_RESULT', () => ({ text: 'Read it.' })],
    ];
    const { t: app } = await start();
    await say(app, 'read the hostname');
    const asked = await waitFor(
      async () => ((await app.inject({ method: 'GET', url: `${BASE}/confirmations?status=pending` })).json().confirmations as Json[]).find((c) => c.tool === 'brain_permission'),
      { timeoutMs: 90_000 },
    );
    expect(asked.description).toContain('asks to use Read');
    expect((await app.inject({ method: 'POST', url: `${BASE}/confirmations/${String(asked.id)}/confirm` })).statusCode).toBe(200);
    await brainSays(app, 'Read it.');
    const result = brainRequests().map(lastUserText).find((x) => x.startsWith('TOOL_RESULT'))!;
    expect(result).not.toContain('is_error');
  });

  it('never reads the key workers\' tokens are minted with, though its directory sits beside it', async () => {
    let keyPath = '';
    script = [
      ['read the key', () => ({ tool: 'Read', input: { file_path: keyPath } })],
      ['TOOL_RESULT', () => ({ text: 'Could not.' })],
    ];
    const { t: app, journal } = await start();
    keyPath = join(journal, 'worker-key');
    await say(app, 'read the key');
    await brainSays(app, 'Could not.');
    const result = brainRequests().map(lastUserText).find((x) => x.startsWith('TOOL_RESULT'))!;
    expect(result).toContain('is_error');
    expect(result).not.toContain(readFileSync(keyPath, 'utf8'));
    expect(((await app.inject({ method: 'GET', url: `${BASE}/confirmations` })).json().confirmations as Json[]).filter((c) => c.tool === 'brain_permission')).toEqual([]);
  });
});
