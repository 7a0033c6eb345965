import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { BUILTIN_TEMPLATES } from '../../src/profiles/templates';
import { FakeAnthropicApi, MessagesRequest, ModelReply } from '../support/fake-anthropic-api';
import { sessionCalls } from '../support/session-calls';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { stopProcessesOfHome } from '../support/workers';

/**
 * What the fake opencode stands for, checked against a real `opencode` whose anthropic provider points at a fake
 * Messages API: turns, resume by session id, a refused request, and each built-in template reaching a session
 * (its config through OPENCODE_CONFIG and its agent by --agent). Opt-in (the binary is ~180 MB):
 * `npm pack opencode-linux-x64@<version>`, unpack it, then BRAINSTEM_REAL_OPENCODE=$PWD/package/bin/opencode
 * npm test -- opencode-real.
 */
const REAL_OPENCODE = process.env.BRAINSTEM_REAL_OPENCODE;
const MODEL = 'claude-sonnet-4-5';

(REAL_OPENCODE ? describe : describe.skip)('opencode sessions with a real opencode', () => {
  let api: FakeAnthropicApi;
  const bin = tempDir('brainstem-opencode-bin-');
  const home = tempDir('brainstem-opencode-home-');
  const cwd = tempDir('brainstem-cwd-');

  beforeAll(() => {
    symlinkSync(REAL_OPENCODE!, join(bin.path, 'opencode'));
  });
  // The profile's own MCP server in the rule checks is this service's /mcp reached with no credential (the main
  // brain's tools), which takes BRAINSTEM_AUTH=off. Workers still send their own credential, and a wrong one is refused.
  const t = useTestApp({ BRAINSTEM_AUTH: 'off', BRAINSTEM_SANDBOX: 'required' }, { listen: true });
  afterEach(async () => api?.close());
  afterAll(async () => {
    // The service has closed: an opencode still writing into the home is stopped before it is removed.
    await stopProcessesOfHome(home.path);
    for (const d of [bin, home, cwd]) d.remove();
  });

  const { call, turnsEnded, untilState } = sessionCalls(() => t);
  /** The model calls of the conversation, not the title opencode has a small model write. */
  const conversation = () => api.requests.filter((r) => r.model === MODEL);

  /** An opencode session whose user config (XDG_CONFIG_HOME) points the anthropic provider at the fake API. */
  async function startOpencode(reply: (n: number, request: MessagesRequest) => ModelReply, body: object = {}, userConfig: object = {}): Promise<string> {
    api = new FakeAnthropicApi(reply);
    api.releaseAll();
    const xdg = join(home.path, `xdg-${Date.now()}`);
    mkdirSync(join(xdg, 'config', 'opencode'), { recursive: true });
    const provider = { anthropic: { options: { baseURL: `${await api.start()}/v1`, apiKey: 'sk-ant-fake' } } };
    writeFileSync(join(xdg, 'config', 'opencode', 'opencode.json'), JSON.stringify({ model: `anthropic/${MODEL}`, provider, autoupdate: false, share: 'disabled', ...userConfig }));
    const env = { PATH: `${bin.path}:${process.env.PATH}`, HOME: home.path, XDG_CONFIG_HOME: join(xdg, 'config'), XDG_DATA_HOME: join(xdg, 'data'), XDG_CACHE_HOME: join(xdg, 'cache'), XDG_STATE_HOME: join(xdg, 'state') };
    const res = await call('POST', '', { cwd: cwd.path, runtime: 'opencode', env, prompt: 'first', ...body });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  it('given a prompt, then the turn ends with the model answer, and the next message resumes the same session', async () => {
    const id = await startOpencode((n) => ({ text: `reply ${n}` }));
    const [first] = await turnsEnded(id, 1);
    expect(first).toMatch(/^reply \d+$/);
    expect((await call('POST', `/${id}/messages`, { text: 'second' })).status).toBe(200);
    const [, second] = await turnsEnded(id, 2);
    expect(second).toMatch(/^reply \d+$/);
    expect(JSON.stringify(conversation()[1].messages)).toContain(first!);
    expect((await call('GET', `/${id}`)).body.state).toBe('pending_handling');
  }, 120000);

  it("given the model calls Brainstem's report_progress, then opencode reaches the MCP server as its session and the progress is recorded", async () => {
    const report = { status: 'working', message: 'halfway through the parser' };
    let called = false;
    // The conversation's first call is the tool call (opencode also has another model write a title).
    const id = await startOpencode((n, request) => {
      if (request.model !== MODEL || called) return { text: `reply ${n}` };
      called = true;
      return { tool: 'brainstem_report_progress', input: report };
    });
    await turnsEnded(id, 1);
    const progress = (await t.app.get<Journal>(JOURNAL).readStream(`session-${id}`)).filter((e) => e.type === 'session.progress').map((e) => e.data);
    expect(progress).toEqual([{ at: expect.any(Number), ...report }]);
  }, 120000);

  it.each([
    ['without --auto, the headless run rejects it and the turn says so', [], false],
    ['with --auto in args, the run approves it and the command runs', ['--auto'], true],
  ])("given the model runs a shell command the default profile would ask about: %s", async (_, args, ran) => {
    const marker = join(cwd.path, `marker-${ran}`);
    let called = false;
    const id = await startOpencode(
      (n, request) => {
        if (request.model !== MODEL || called) return { text: `reply ${n}` };
        called = true;
        return { tool: 'bash', input: { command: `touch ${marker}`, description: 'make a marker' } };
      },
      { args },
    );
    const [result] = await turnsEnded(id, 1);
    expect(existsSync(marker)).toBe(ran);
    if (ran) expect(result).toMatch(/^reply \d+$/);
    else expect(result).toMatch(/^opencode turn failed: bash \(touch .*\): .*rejected permission/);
  }, 120000);

  it.each([
    ['with them, it runs the allowed tool, rejects the one to ask about, and does not offer the denied one', true],
    ['without them (the control), it offers all three and runs both calls', false],
  ])("given rules on a profile's own MCP server: %s", async (_, withRules) => {
    // The profile's server is the service's own MCP endpoint without a session header: the main brain's tools.
    const rules = withRules ? { allow: ['mcp__other'], ask: ['mcp__other__supervision_status'], deny: ['mcp__other__stop_session'] } : {};
    const profile = { name: `Opencode MCP rules ${withRules}`, target_runtime: 'opencode', tools: { mcp_servers: { other: { type: 'http', url: `${t.url}/mcp` } } }, permissions: { mode: 'acceptEdits', ...rules } };
    const created = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: profile });
    const calls = ['other_list_sessions', 'other_supervision_status'];
    const id = await startOpencode((n, request) => {
      const next = request.model === MODEL && calls[conversation().length - 1];
      return next ? { tool: next, input: {} } : { text: `reply ${n}` };
    }, { profile_id: created.json().id });
    const [result] = await turnsEnded(id, 1);
    const offered = (conversation()[0].tools ?? []).map((x) => x.name);
    expect(offered).toEqual(expect.arrayContaining(['other_list_sessions', 'other_supervision_status']));
    expect(offered.includes('other_stop_session')).toBe(!withRules);
    expect(JSON.stringify(conversation()[1].messages.at(-1))).toContain(id);
    if (withRules) expect(result).toMatch(/^opencode turn failed: other_supervision_status: .*rejected permission/);
    else expect(result).toMatch(/^reply \d+$/);
  }, 120000);

  it('given the API refuses the request, then the turn ends as failed with its message', async () => {
    const id = await startOpencode(() => ({ refuse: 'prompt is too long' }));
    const [result] = await turnsEnded(id, 1);
    expect(result).toMatch(/^opencode turn failed: .*prompt is too long/);
  }, 120000);

  it('given a config opencode does not accept, then it refuses to run: the check can fail (the control)', async () => {
    const id = await startOpencode((n) => ({ text: `reply ${n}` }), {}, { agent: { odd: { mode: 'sometimes' } } });
    await untilState(id, 'exited');
    const log = await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}/output?tail=20` });
    expect(log.json().lines.join('\n')).toContain('Configuration is invalid');
    expect(conversation()).toHaveLength(0);
  }, 120000);

  it.each(BUILTIN_TEMPLATES.map((x) => [x.id, x.doc.instructions.system_prompt ?? '']))(
    'given the %s template, then opencode accepts its session config and runs the turn as its agent',
    async (profileId, systemPrompt) => {
      expect(systemPrompt).not.toBe('');
      const id = await startOpencode((n) => ({ text: `reply ${n}` }), { profile_id: profileId });
      const [result] = await turnsEnded(id, 1);
      expect(result).toMatch(/^reply \d+$/);
      // Brainstem's worker tools, from the reserved MCP server the session config carries.
      expect((conversation()[0].tools ?? []).map((x) => x.name)).toEqual(expect.arrayContaining(['brainstem_report_progress', 'brainstem_ask_human']));
      expect(JSON.stringify(conversation()[0].system)).toContain(JSON.stringify(systemPrompt.split('\n')[0]).slice(1, -1));
    },
    120000,
  );
});
