import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { BrainActivity, BrainLaunch, BrainTurnEnd } from '../../src/main-brain/agent/brain-agent.port';
import { PerTurnBrainAgent } from '../../src/main-brain/agent/per-turn-brain.agent';
import { PerTurnBrainRuntime, codexBrain, geminiBrain, opencodeBrain } from '../../src/main-brain/agent/per-turn-brain.runtimes';
import { NodeProcessRunner } from '../../src/sessions/runtimes/process-runner';
import { FakeAnthropicApi, MessagesRequest, ModelReply } from '../support/fake-anthropic-api';
import { FakeGeminiApi, GeminiReply } from '../support/fake-gemini-api';
import { FakeOpenAiApi, ResponsesReply } from '../support/fake-openai-api';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';

/**
 * The main brain hosted on the real codex, gemini and opencode, each against a fake model API: one conversation
 * over turns, what it reports as it runs, a resume of a conversation the runtime does not know, and Brainstem's MCP
 * server reached with the brain's credential (a listener standing in for it: it records the header and answers
 * 404, which each runtime gets over). Opt-in per runtime, as the real-runtime session specs are:
 * BRAINSTEM_REAL_CODEX, BRAINSTEM_REAL_GEMINI, BRAINSTEM_REAL_OPENCODE.
 */
const TOKEN = 'brain-token-123';
const INSTRUCTIONS = 'You are the Brainstem main brain; supervise the workers.';

/** Stands in for Brainstem's /mcp: records the Authorization header of every request. */
class McpListener {
  readonly authorizations: string[] = [];
  private server: Server | null = null;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.authorizations.push(req.headers.authorization ?? '');
      req.resume();
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** A brain on `runtime`, and what it reported per turn. */
function brainHarness(runtime: PerTurnBrainRuntime) {
  const dirs: Array<ReturnType<typeof tempDir>> = [];
  const agents: PerTurnBrainAgent[] = [];
  const mcp = new McpListener();
  return {
    mcp,
    dir(prefix: string): string {
      const d = tempDir(prefix);
      dirs.push(d);
      return d.path;
    },
    async agent(env: Record<string, string>, model: string | null): Promise<PerTurnBrainAgent> {
      const launch: BrainLaunch = {
        cwd: this.dir('brainstem-brain-'),
        env: { PATH: process.env.PATH!, ...env, BRAINSTEM_TOKEN: TOKEN },
        mcp_url: await mcp.start(),
        instructions: INSTRUCTIONS,
        model,
        profile_args: [],
      };
      const agent = new PerTurnBrainAgent(runtime, () => launch, new NodeProcessRunner());
      agents.push(agent);
      return agent;
    },
    async cleanUp(): Promise<void> {
      for (const a of agents.splice(0)) a.close();
      await mcp.close();
      for (const d of dirs.splice(0)) d.remove();
    },
  };
}

async function turn(agent: PerTurnBrainAgent, prompt: string, conversationId: string | null): Promise<{ end: BrainTurnEnd; activity: BrainActivity[] }> {
  const activity: BrainActivity[] = [];
  const end = await agent.turn(prompt, conversationId, (a) => activity.push(a));
  return { end, activity };
}

const conversationOf = (activity: BrainActivity[]) => activity.flatMap((a) => (a.kind === 'conversation' ? [a.id] : []));

const REAL_CODEX = process.env.BRAINSTEM_REAL_CODEX;
(REAL_CODEX ? describe : describe.skip)('the main brain on a real codex', () => {
  const h = brainHarness(codexBrain);
  let api: FakeOpenAiApi;
  const bin = tempDir('brainstem-codex-bin-');
  beforeAll(() => symlinkSync(REAL_CODEX!, join(bin.path, 'codex')));
  afterEach(async () => {
    await h.cleanUp();
    await api?.close();
  });
  afterAll(() => bin.remove());

  async function codexAgent(reply?: (n: number) => ResponsesReply, model: string | null = 'gpt-fake'): Promise<PerTurnBrainAgent> {
    api = new FakeOpenAiApi(0, reply);
    const home = h.dir('brainstem-codex-home-');
    writeFileSync(join(home, 'config.toml'), `model_provider = "fake"\n[model_providers.fake]\nname = "fake"\nbase_url = "${await api.start()}"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n`);
    // codex runs its commands in its own sandbox. With the system's bubblewrap, that needs the helper it links under
    // CODEX_HOME, which it refuses to put under its temp dir (where this home is), and then every command fails
    // ("bwrap: execvp codex-linux-sandbox: No such file or directory"): codex gets a temp dir of its own.
    return h.agent({ PATH: `${bin.path}:${process.env.PATH}`, CODEX_HOME: home, TMPDIR: h.dir('brainstem-codex-tmp-'), OPENAI_API_KEY: 'sk-fake' }, model);
  }

  it('given two turns, then the second continues the conversation of the first, whose thread id is reported, and the instructions and the MCP credential reach codex', async () => {
    const agent = await codexAgent();
    const first = await turn(agent, 'first', null);
    expect(first.end).toEqual({ outcome: 'completed', text: 'reply 1' });
    const [id] = conversationOf(first.activity);
    // What the turn used, as the fake reported it (5 in, 2 out), once as it ends: codex's count is the thread's running total.
    const spent = { kind: 'turn_usage', cumulative: true, entries: [{ model: 'gpt-fake', input_tokens: 5, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: null }] };
    expect(first.activity).toEqual([{ kind: 'conversation', id }, { kind: 'text', text: 'reply 1' }, { kind: 'usage', context_tokens: 5 }, spent]);
    const second = await turn(agent, 'second', id);
    expect(second.end).toEqual({ outcome: 'completed', text: 'reply 2' });
    expect(conversationOf(second.activity)).toEqual([id]);
    expect(JSON.stringify(api.requests[1].input)).toContain('reply 1');
    expect(api.requests[0].model).toBe('gpt-fake');
    expect(JSON.stringify(api.requests[0].input)).toContain(INSTRUCTIONS);
    expect(h.mcp.authorizations).toContain(`Bearer ${TOKEN}`);
  }, 120000);

  it('given the model runs a command, then the command is reported as a tool use before the answer', async () => {
    // codex's own default model: codex offers its `exec` tool to the models it knows, not to gpt-fake.
    const script = 'const r = await tools.exec_command({ cmd: "echo hi" }); text(JSON.stringify(r));';
    const agent = await codexAgent((n) => (n === 1 ? { exec: script } : { text: `reply ${n}` }), null);
    const { end, activity } = await turn(agent, 'first', null);
    expect(end).toEqual({ outcome: 'completed', text: 'reply 2' });
    expect(activity.filter((a) => a.kind !== 'usage' && a.kind !== 'turn_usage').slice(1)).toEqual([
      { kind: 'tool_use', name: 'command_execution', input: { command: expect.stringContaining('echo hi') } },
      { kind: 'text', text: 'reply 2' },
    ]);
  }, 120000);

  it("given the model runs a command that writes, then codex's own sandbox, which the brain keeps, refuses the write", async () => {
    const target = join(h.dir('brainstem-brain-write-'), 'written');
    const script = `const r = await tools.exec_command({ cmd: ${JSON.stringify(`touch ${target}`)} }); text(JSON.stringify(r));`;
    const agent = await codexAgent((n) => (n === 1 ? { exec: script } : { text: `reply ${n}` }), null);
    const { end } = await turn(agent, 'first', null);
    expect(end).toEqual({ outcome: 'completed', text: 'reply 2' });
    // What the command gave the model, in the next request: codex's read-only sandbox (its default) refused it.
    expect(JSON.stringify(api.requests[1].input)).toContain('Read-only file system');
    expect(existsSync(target)).toBe(false);
  }, 120000);

  it("given the API says the context window is exceeded, then the turn fails with a full context, and the API's failure is reported", async () => {
    const agent = await codexAgent(() => ({ fail: { code: 'context_length_exceeded', message: 'Your input exceeds the context window of this model.' } }));
    const { end, activity } = await turn(agent, 'first', null);
    expect(end).toEqual({ outcome: 'failed', reason: expect.stringContaining('context window'), context_full: true });
    expect(activity).toContainEqual({ kind: 'api_error', message: (end as { reason: string }).reason });
  }, 120000);

  it.each([
    ['a thread id codex has no rollout of', '0199a213-81c0-7800-8aa1-bbab2a035a53', 'no rollout found'],
    ['an id codex starts a new thread for instead', 'bogus', 'instead of resuming bogus'],
  ])('given a resume of %s, then the turn fails as a failed resume', async (_, id, said) => {
    const agent = await codexAgent();
    const { end } = await turn(agent, 'again', id);
    expect(end).toEqual({ outcome: 'failed', reason: expect.stringContaining(said), resume_failed: true });
  }, 120000);
});

const REAL_GEMINI = process.env.BRAINSTEM_REAL_GEMINI;
(REAL_GEMINI ? describe : describe.skip)('the main brain on a real gemini', () => {
  const h = brainHarness(geminiBrain);
  let api: FakeGeminiApi;
  const bin = tempDir('brainstem-gemini-bin-');
  beforeAll(() => symlinkSync(REAL_GEMINI!, join(bin.path, 'gemini')));
  afterEach(async () => {
    await h.cleanUp();
    await api?.close();
  });
  afterAll(() => bin.remove());

  async function geminiAgent(reply?: (n: number) => GeminiReply): Promise<PerTurnBrainAgent> {
    api = new FakeGeminiApi(reply);
    const home = h.dir('brainstem-gemini-home-');
    mkdirSync(join(home, '.gemini'));
    writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
    // A model by name: with the default ("auto") gemini first asks a router model, which the fake cannot answer.
    return h.agent({ PATH: `${bin.path}:${process.env.PATH}`, HOME: home, GEMINI_API_KEY: 'fake', GOOGLE_GEMINI_BASE_URL: await api.start() }, 'gemini-2.5-pro');
  }

  it('given two turns, then the second continues the conversation of the first, whose session id is reported, the text streamed, and the instructions and the MCP credential reach gemini', async () => {
    const agent = await geminiAgent();
    const first = await turn(agent, 'first', null);
    expect(first.end).toEqual({ outcome: 'completed', text: 'reply 1' });
    const [id] = conversationOf(first.activity);
    expect(first.activity).toEqual([
      { kind: 'conversation', id },
      { kind: 'text_delta', text: 'reply 1' },
      { kind: 'usage', context_tokens: 5 },
      { kind: 'text', text: 'reply 1' },
      { kind: 'turn_usage', entries: [{ model: 'gemini-2.5-pro', input_tokens: 5, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: null }] },
    ]);
    const second = await turn(agent, 'second', id);
    expect(second.end).toEqual({ outcome: 'completed', text: 'reply 2' });
    expect(conversationOf(second.activity)).toEqual([id]);
    expect(JSON.stringify(api.requests[1].contents)).toContain('reply 1');
    expect(JSON.stringify(api.requests[0])).toContain(INSTRUCTIONS);
    expect(h.mcp.authorizations).toContain(`Bearer ${TOKEN}`);
  }, 120000);

  it('given the model calls a tool, then the call is reported, and the streamed message before the next one is reported whole', async () => {
    const agent = await geminiAgent((n) => (n === 1 ? { call: 'list_directory', args: { dir_path: '.' } } : { text: `reply ${n}` }));
    const { end, activity } = await turn(agent, 'first', null);
    expect(end).toEqual({ outcome: 'completed', text: 'reply 2' });
    expect(activity.filter((a) => a.kind !== 'usage' && a.kind !== 'conversation' && a.kind !== 'turn_usage')).toEqual([
      { kind: 'tool_use', name: 'list_directory', input: { dir_path: '.' } },
      { kind: 'text_delta', text: 'reply 2' },
      { kind: 'text', text: 'reply 2' },
    ]);
  }, 120000);

  it('given the API refuses the request, then an API error is reported and the turn fails with it', async () => {
    const agent = await geminiAgent(() => ({ refuse: 'API key not valid.' }));
    const { end, activity } = await turn(agent, 'first', null);
    expect(end).toEqual({ outcome: 'failed', reason: expect.stringContaining('API key not valid') });
    expect(activity).toContainEqual({ kind: 'api_error', message: expect.stringContaining('API key not valid') });
  }, 120000);

  it('given a resume of a session gemini does not know, then the turn fails as a failed resume', async () => {
    const agent = await geminiAgent();
    const { end } = await turn(agent, 'again', '0199a213-81c0-7800-8aa1-bbab2a035a53');
    expect(end).toEqual({ outcome: 'failed', reason: expect.stringContaining('Error resuming session'), resume_failed: true });
  }, 120000);
});

const REAL_OPENCODE = process.env.BRAINSTEM_REAL_OPENCODE;
const OPENCODE_MODEL = 'claude-sonnet-4-5';
(REAL_OPENCODE ? describe : describe.skip)('the main brain on a real opencode', () => {
  const h = brainHarness(opencodeBrain);
  let api: FakeAnthropicApi;
  const bin = tempDir('brainstem-opencode-bin-');
  beforeAll(() => symlinkSync(REAL_OPENCODE!, join(bin.path, 'opencode')));
  afterEach(async () => {
    await h.cleanUp();
    await api?.close();
  });
  afterAll(() => bin.remove());
  /** The model calls of the conversation, not the title opencode has a small model write. */
  const conversation = () => api.requests.filter((r) => r.model === OPENCODE_MODEL);

  async function opencodeAgent(reply: (n: number, request: MessagesRequest) => ModelReply = (n) => ({ text: `reply ${n}` }), hold = false): Promise<PerTurnBrainAgent> {
    api = new FakeAnthropicApi(reply);
    if (!hold) api.releaseAll();
    const xdg = h.dir('brainstem-opencode-xdg-');
    mkdirSync(join(xdg, 'config', 'opencode'), { recursive: true });
    const provider = { anthropic: { options: { baseURL: `${await api.start()}/v1`, apiKey: 'sk-ant-fake' } } };
    writeFileSync(join(xdg, 'config', 'opencode', 'opencode.json'), JSON.stringify({ provider, autoupdate: false, share: 'disabled' }));
    const env = { PATH: `${bin.path}:${process.env.PATH}`, HOME: xdg, XDG_CONFIG_HOME: join(xdg, 'config'), XDG_DATA_HOME: join(xdg, 'data'), XDG_CACHE_HOME: join(xdg, 'cache'), XDG_STATE_HOME: join(xdg, 'state') };
    return h.agent(env, `anthropic/${OPENCODE_MODEL}`);
  }

  it('given two turns, then the second continues the conversation of the first, whose session id is reported, and the instructions and the MCP credential reach opencode', async () => {
    const agent = await opencodeAgent();
    const first = await turn(agent, 'first', null);
    expect(first.end).toEqual({ outcome: 'completed', text: expect.stringMatching(/^reply \d+$/) });
    const text = (first.end as { text: string }).text;
    const [id] = conversationOf(first.activity);
    // opencode prices its calls itself: the turn's usage comes with a cost.
    const spent = { kind: 'turn_usage', entries: [expect.objectContaining({ model: expect.any(String), input_tokens: expect.any(Number), cost_usd: expect.any(Number) })] };
    expect(first.activity).toEqual([{ kind: 'conversation', id }, { kind: 'text', text }, { kind: 'usage', context_tokens: expect.any(Number) }, spent]);
    const second = await turn(agent, 'second', id);
    expect(second.end).toEqual({ outcome: 'completed', text: expect.stringMatching(/^reply \d+$/) });
    expect(conversationOf(second.activity)).toEqual([id]);
    expect(JSON.stringify(conversation()[1].messages)).toContain(text);
    expect(JSON.stringify(conversation()[0].system)).toContain(INSTRUCTIONS);
    expect(h.mcp.authorizations).toContain(`Bearer ${TOKEN}`);
  }, 120000);

  it('given the model calls a tool, then the call is reported before the answer', async () => {
    let called = false;
    // The conversation's first call is the tool call (opencode also has another model write a title).
    const agent = await opencodeAgent((n, request) => {
      if (request.model !== OPENCODE_MODEL || called) return { text: `reply ${n}` };
      called = true;
      return { tool: 'glob', input: { pattern: '*.md' } };
    });
    const { end, activity } = await turn(agent, 'first', null);
    expect(end).toEqual({ outcome: 'completed', text: expect.stringMatching(/^reply \d+$/) });
    const kinds = activity.filter((a) => a.kind === 'tool_use' || a.kind === 'text');
    expect(kinds).toEqual([{ kind: 'tool_use', name: 'glob', input: { pattern: '*.md' } }, { kind: 'text', text: (end as { text: string }).text }]);
  }, 120000);

  it('given a turn interrupted while the model has not answered, then its process is killed and the turn fails with the reason', async () => {
    const agent = await opencodeAgent(undefined, true);
    const ending = turn(agent, 'first', null);
    await waitFor(() => conversation().length > 0, { what: 'the model request', timeoutMs: 60000 });
    agent.interrupt('the round timed out');
    expect((await ending).end).toEqual({ outcome: 'failed', reason: 'the round timed out' });
  }, 120000);

  it('given a resume of a session opencode does not know, then the turn fails as a failed resume', async () => {
    const agent = await opencodeAgent();
    const { end } = await turn(agent, 'again', 'ses_0000000000000000000000000');
    expect(end).toEqual({ outcome: 'failed', reason: expect.stringContaining('Session not found'), resume_failed: true });
  }, 120000);
});
