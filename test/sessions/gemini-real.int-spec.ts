import { spawn } from 'node:child_process';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_TEMPLATES } from '../../src/profiles/templates';
import { FakeGeminiApi, GeminiReply } from '../support/fake-gemini-api';
import { sessionCalls } from '../support/session-calls';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { stopProcessesOfHome } from '../support/workers';

/**
 * What the fake gemini stands for, checked against a real `gemini` talking to a fake Gemini API: headless turns,
 * resume by session id, a refused request, and each built-in template applied for gemini-cli as gemini reads it
 * (its settings schema, the tool allowlist, GEMINI.md). Opt-in: `npm install @google/gemini-cli@0.61.0` somewhere,
 * then BRAINSTEM_REAL_GEMINI=<that dir>/node_modules/.bin/gemini npm test -- gemini-real.
 */
const REAL_GEMINI = process.env.BRAINSTEM_REAL_GEMINI;
/** A model by name: with the default ("auto") gemini first asks a router model, which the fake cannot answer. */
const MODEL = ['-m', 'gemini-2.5-pro'];
/** The built-in tools a profile can name (gemini adds its own, such as update_topic, which no profile maps). */
const BUILTIN_TOOL = /^(read_file|write_file|replace|run_shell_command|glob|grep_search|list_directory|google_web_search|web_fetch|write_todos)$/;
/** What gemini 0.61 offers in plan mode, of those. */
const PLAN_MODE_TOOLS = ['read_file', 'glob', 'grep_search', 'list_directory', 'google_web_search'];

(REAL_GEMINI ? describe : describe.skip)('gemini-cli with a real gemini', () => {
  let api: FakeGeminiApi;
  const bin = tempDir('brainstem-gemini-bin-');
  const home = tempDir('brainstem-gemini-home-');
  const work = tempDir('brainstem-gemini-work-');

  beforeAll(() => {
    symlinkSync(REAL_GEMINI!, join(bin.path, 'gemini'));
    mkdirSync(join(home.path, '.gemini'));
    writeFileSync(join(home.path, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
  });
  // The profile's own MCP server in the rule checks is this service's /mcp reached with no credential (the main
  // brain's tools), which takes BRAINSTEM_AUTH=off. Workers still send their own credential, and a wrong one is refused.
  const t = useTestApp({ BRAINSTEM_AUTH: 'off', BRAINSTEM_SANDBOX: 'required' }, { listen: true });
  afterEach(async () => api?.close());
  afterAll(async () => {
    // The service has closed: a gemini still writing into the home is stopped before it is removed.
    await stopProcessesOfHome(home.path);
    for (const d of [bin, home, work]) d.remove();
  });

  async function geminiEnv(reply?: (n: number) => GeminiReply): Promise<Record<string, string>> {
    api = new FakeGeminiApi(reply);
    return { PATH: `${bin.path}:${process.env.PATH}`, HOME: home.path, GEMINI_API_KEY: 'fake', GOOGLE_GEMINI_BASE_URL: await api.start() };
  }
  const { call, turnsEnded } = sessionCalls(() => t);

  async function startGemini(env: Record<string, string>): Promise<string> {
    const res = await call('POST', '', { cwd: work.path, runtime: 'gemini-cli', env, prompt: 'first', args: ['--skip-trust', ...MODEL] });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  it('given a prompt, then the turn ends with the model answer, and the next message resumes the same session', async () => {
    const id = await startGemini(await geminiEnv());
    expect(await turnsEnded(id, 1)).toEqual(['reply 1']);
    expect((await call('POST', `/${id}/messages`, { text: 'second' })).status).toBe(200);
    expect(await turnsEnded(id, 2)).toEqual(['reply 1', 'reply 2']);
    expect(JSON.stringify(api.requests[1].contents)).toContain('reply 1');
    expect((await call('GET', `/${id}`)).body.state).toBe('pending_handling');
  }, 120000);

  it('given the API refuses the request, then the turn ends as failed with its message, and the session goes on', async () => {
    const id = await startGemini(await geminiEnv(() => ({ refuse: 'API key not valid.' })));
    const [result] = await turnsEnded(id, 1);
    expect(result).toMatch(/^gemini-cli turn failed: .*API key not valid/);
    expect((await call('GET', `/${id}`)).body.state).toBe('pending_handling');
  }, 120000);

  /**
   * A trusted headless turn in `dir` (a project's settings count only in a trusted folder), as a worker of session
   * `sessionId` would run it: its exit code and output.
   */
  async function headless(dir: string, sessionId = '', reply?: (n: number) => GeminiReply): Promise<{ code: number | null; output: string }> {
    const worker = sessionId ? { BRAINSTEM_SESSION_ID: sessionId, BRAINSTEM_TOKEN: t.tokenOf({ worker: sessionId }) } : {};
    const env = { ...process.env, ...(await geminiEnv(reply)), GEMINI_CLI_TRUST_WORKSPACE: 'true', ...worker };
    const child = spawn(REAL_GEMINI!, ['--output-format', 'stream-json', ...MODEL], { cwd: dir, env });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stdin.end('hello\n');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, output };
  }

  /** A live session for a headless gemini to act as (a command worker that waits). */
  async function workerSession(): Promise<string> {
    const res = await call('POST', '', { cwd: work.path, command: process.execPath, args: ['-e', 'setTimeout(() => {}, 120000)'] });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  it("given the model calls Brainstem's report_progress in an applied project, then gemini reaches the MCP server as its session and the progress is recorded", async () => {
    const dir = join(work.path, 'calls-report-progress');
    mkdirSync(dir);
    expect((await t.inject({ method: 'POST', url: '/api/v1/agent-profiles/devops-engineer/apply', payload: { runtime: 'gemini-cli', dir } })).statusCode).toBe(200);
    const session = await workerSession();
    const report = { status: 'working', message: 'halfway through the parser' };
    const { code } = await headless(dir, session, (n) => (n === 1 ? { call: 'mcp_brainstem_report_progress', args: report } : { text: `reply ${n}` }));
    expect(code).toBe(0);
    const progress = (await t.app.get<Journal>(JOURNAL).readStream(`session-${session}`)).filter((e) => e.type === 'session.progress').map((e) => e.data);
    expect(progress).toEqual([{ at: expect.any(Number), ...report }]);
    await call('POST', `/${session}/stop`);
  }, 120000);

  it.each([
    ['with no rule on it, none of its tools is offered (the control)', [], [], []],
    ['allowing it and denying one tool, every other tool is offered and runs', ['mcp__other'], ['mcp__other__stop_session'], ['mcp_other_list_sessions']],
  ])("given a profile with an MCP server of its own applied: %s", async (label, allow, deny, offered) => {
    // The profile's server is the service's own MCP endpoint without a session header: the main brain's tools.
    const created = await t.inject({
      method: 'POST',
      url: '/api/v1/agent-profiles',
      payload: { name: `Own server ${allow.length}`, tools: { mcp_servers: { other: { type: 'http', url: `${t.url}/mcp` } } }, permissions: { mode: 'acceptEdits', allow, deny } },
    });
    expect(created.statusCode).toBe(201);
    const dir = join(work.path, `own-server-${allow.length}`);
    mkdirSync(dir);
    expect((await t.inject({ method: 'POST', url: `/api/v1/agent-profiles/${created.json().id}/apply`, payload: { runtime: 'gemini-cli', dir } })).statusCode).toBe(200);
    const { code } = await headless(dir, await workerSession(), (n) => (n === 1 ? { call: 'mcp_other_list_sessions', args: {} } : { text: `reply ${n}` }));
    expect(code).toBe(0);
    const tools = api.toolsOf(1).filter((tool) => tool.startsWith('mcp_other_'));
    expect(tools).toEqual(offered.length ? expect.arrayContaining(offered) : []);
    expect(tools).not.toContain('mcp_other_stop_session');
    // What went back to the model: the session list, or gemini's "not found".
    const response = JSON.stringify(api.requests[1].contents.slice(-1));
    expect(response).toContain(offered.length ? '\\"sessions\\"' : 'not found');
  }, 120000);

  it.each([
    ['a command the allow rule covers runs', 'touch made.txt', 'made.txt', true],
    ['a command it does not cover is refused', 'touch other.txt', 'other.txt', false],
  ])('given a profile allowing Bash(touch made.txt *) applied, when the model runs a shell command: %s', async (_, command, file, runs) => {
    const created = await t.inject({
      method: 'POST',
      url: '/api/v1/agent-profiles',
      payload: { name: `Toucher ${file}`, permissions: { mode: 'acceptEdits', allow: ['Bash(touch made.txt *)'] } },
    });
    expect(created.statusCode).toBe(201);
    const dir = join(work.path, `allow-${file}`);
    mkdirSync(dir);
    expect((await t.inject({ method: 'POST', url: `/api/v1/agent-profiles/${created.json().id}/apply`, payload: { runtime: 'gemini-cli', dir } })).statusCode).toBe(200);
    const { code } = await headless(dir, await workerSession(), (n) => (n === 1 ? { call: 'run_shell_command', args: { command, description: 'touch' } } : { text: `reply ${n}` }));
    expect(code).toBe(0);
    expect(existsSync(join(dir, file))).toBe(runs);
  }, 120000);

  it('given a settings file gemini does not accept, then the check sees it (the control)', async () => {
    const dir = join(work.path, 'control');
    mkdirSync(join(dir, '.gemini'), { recursive: true });
    writeFileSync(join(dir, '.gemini', 'settings.json'), JSON.stringify({ general: { defaultApprovalMode: 'sometimes' } }));
    const { code, output } = await headless(dir);
    expect(output).toContain('Invalid configuration');
    expect(code).not.toBe(0);
  }, 120000);

  it.each(BUILTIN_TEMPLATES.map((x) => [x.id]))('given the %s template applied, then gemini accepts its settings and offers the model its tools and GEMINI.md', async (id) => {
    const dir = join(work.path, id);
    mkdirSync(dir);
    const res = await t.inject({ method: 'POST', url: `/api/v1/agent-profiles/${id}/apply`, payload: { runtime: 'gemini-cli', dir } });
    expect(res.statusCode).toBe(200);
    const { code, output } = await headless(dir, await workerSession());
    expect(output).not.toContain('Invalid configuration');
    expect(code).toBe(0);
    const settings = JSON.parse(readFileSync(join(dir, '.gemini', 'settings.json'), 'utf8')) as {
      general?: { defaultApprovalMode?: string };
      tools?: { core?: string[]; exclude?: string[]; allowed?: string[] };
    };
    const offered = api.toolsOf(api.requests.length);
    // With an allowlist, every allowed built-in is offered (none lost to a name gemini does not know) and no other
    // (in plan mode gemini offers only its read-only ones and those of allow rules); never an excluded one.
    const core = settings.tools?.core ?? [];
    const planMode = settings.general?.defaultApprovalMode === 'plan';
    if (core.length > 0) {
      const builtins = core.filter((tool) => BUILTIN_TOOL.test(tool));
      // The tools of allow rules (run_shell_command(git log)) are offered in plan mode too.
      const allowed = (settings.tools?.allowed ?? []).map((rule) => rule.replace(/\(.*$/, ''));
      const inPlanMode = (tool: string) => PLAN_MODE_TOOLS.includes(tool) || allowed.includes(tool);
      expect(offered.filter((tool) => BUILTIN_TOOL.test(tool)).sort()).toEqual(builtins.filter((tool) => !planMode || inPlanMode(tool)).sort());
    }
    for (const tool of settings.tools?.exclude ?? []) expect(offered).not.toContain(tool);
    // Brainstem's worker tools, from the reserved MCP server reached as this session (plan mode offers no MCP tool).
    const worker = ['mcp_brainstem_report_progress', 'mcp_brainstem_notify_blocked', 'mcp_brainstem_ask_human'];
    if (!planMode) expect(offered).toEqual(expect.arrayContaining(worker));
    const geminiMd = readFileSync(join(dir, 'GEMINI.md'), 'utf8');
    expect(JSON.stringify(api.requests[api.requests.length - 1])).toContain(JSON.stringify(geminiMd.split('\n')[1]).slice(1, -1));
  }, 120000);
});
