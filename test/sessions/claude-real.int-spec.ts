import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_TEMPLATES } from '../../src/profiles/templates';
import { Journal, JournalEvent } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { FakeAnthropicApi, MessagesRequest, ModelReply } from '../support/fake-anthropic-api';
import { ServiceProcess, startService } from '../support/service-process';
import { sessionCalls } from '../support/session-calls';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper, stopProcessesOfHome } from '../support/workers';

/**
 * What the fake claude stands for, checked against a real `claude` talking to a fake model API: queued
 * messages, permission answers, and a profile's flags.
 * Opt-in (it needs claude's ~250 MB binary): BRAINSTEM_REAL_CLAUDE=/path/to/claude npm test -- claude-real.
 * The binary comes from npm: `npm pack @anthropic-ai/claude-code-linux-x64` holds it as package/claude.
 */
const REAL_CLAUDE = process.env.BRAINSTEM_REAL_CLAUDE;

/** The environment of a claude that talks to the fake model API at `baseUrl` (found first on PATH from `bin`, if given). */
const claudeEnv = (baseUrl: string, home: string, bin?: string): Record<string, string> => ({
  PATH: bin ? `${bin}:${process.env.PATH}` : (process.env.PATH ?? ''),
  HOME: home,
  ANTHROPIC_BASE_URL: baseUrl,
  ANTHROPIC_API_KEY: 'sk-ant-fake',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  // How long claude waits for an MCP server to start: on a loaded machine the stdio bridge (TypeScript through swc
  // when dist/ holds no build) can take longer than claude's default, and claude then goes on without its tools.
  MCP_TIMEOUT: '60000',
});

(REAL_CLAUDE ? describe : describe.skip)('claude-code sessions with a real claude', () => {
  let api: FakeAnthropicApi;
  const reaper = new WorkerReaper();
  const dirs = { bin: tempDir('brainstem-claude-bin-'), home: tempDir('brainstem-claude-home-'), cwd: tempDir('brainstem-cwd-') };

  beforeAll(() => {
    symlinkSync(REAL_CLAUDE!, join(dirs.bin.path, 'claude'));
  });
  const t = useTestApp({}, { listen: true });
  afterEach(async () => {
    reaper.killAll();
    await api?.close();
  });
  afterAll(async () => {
    // The service has closed: every claude still writing into the home is stopped before it is removed.
    await stopProcessesOfHome(dirs.home.path);
    for (const d of Object.values(dirs)) d.remove();
  });

  const { call, untilState } = sessionCalls(() => t);
  const events = (id: string): Promise<JournalEvent[]> => t.app.get<Journal>(JOURNAL).readStream(`session-${id}`);
  const ofType = (all: JournalEvent[], type: string) => all.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

  /** A fake model API whose replies `reply` chooses (held until released), and the env of a claude using it. */
  async function fakeModel(reply: (n: number) => ModelReply): Promise<Record<string, string>> {
    api = new FakeAnthropicApi(reply);
    return claudeEnv(await api.start(), dirs.home.path, dirs.bin.path);
  }

  /** A claude-code session on a fake model API whose replies `reply` chooses (held until released). */
  async function startClaude(reply: (n: number) => ModelReply, body: object = {}): Promise<string> {
    const env = await fakeModel(reply);
    const started = await call('POST', '', { cwd: dirs.cwd.path, runtime: 'claude-code', env, prompt: 'first', ...body });
    expect(started.status).toBe(201);
    reaper.track(started.body.pid);
    return started.body.id;
  }

  /**
   * Starts a turn whose first model reply is held, sends `text` during it, lets the model answer and allows
   * any permission claude asks for. Claude takes the message into the turn or runs another turn for it,
   * depending on when it read it: either way the session must work until the last turn ends, and only then
   * be pending_handling.
   */
  async function messageDuringTurn(text: string, reply: (n: number) => ModelReply): Promise<JournalEvent[]> {
    const id = await startClaude(reply);
    await waitFor(() => api.requests.length > 0 || undefined, { timeoutMs: 60000, what: "claude's first model request" });
    expect((await call('POST', `/${id}/messages`, { text })).status).toBe(200);
    api.releaseAll();
    const last = await waitFor(
      async () => {
        const s = (await call('GET', `/${id}`)).body;
        if (s.state === 'pending_authorization') await call('POST', `/${id}/permission`, { decision: 'allow' });
        const all = await events(id);
        const ends = ofType(all, 'session.turn_ended');
        return s.state === 'pending_handling' && ends.length > 0 ? all : undefined;
      },
      { timeoutMs: 60000, what: 'the session pending_handling' },
    );
    const ends = ofType(last, 'session.turn_ended');
    expect(ends.slice(0, -1).every((e) => e.superseded === true)).toBe(true);
    expect(ends[ends.length - 1].superseded).toBeUndefined();
    const states = ofType(last, 'session.state_changed').map((d) => d.to);
    expect(states.filter((s) => s === 'pending_handling')).toEqual(['pending_handling']);
    expect(states[states.length - 1]).toBe('pending_handling');
    expect(ofType(last, 'session.runtime_session_assigned')).toHaveLength(1);
    return last;
  }

  it('given a message sent while the model answers, then the session works until the turn that took it ends', async () => {
    await messageDuringTurn('second', (n) => ({ text: `reply ${n}` }));
    expect(JSON.stringify(api.requests[api.requests.length - 1].messages)).toContain('second');
  }, 120000);

  it('given a message sent while the model asks for a tool, then the session works until the turn that took it ends', async () => {
    writeFileSync(join(dirs.cwd.path, 'notes.md'), 'notes\n');
    await messageDuringTurn('second', (n) => (n === 1 ? { tool: 'Read', input: { file_path: join(dirs.cwd.path, 'notes.md') } } : { text: `reply ${n}` }));
    expect(JSON.stringify(api.requests[api.requests.length - 1].messages)).toContain('second');
  }, 120000);

  it('given a slash command sent during a turn, which claude does not echo, then the session works until the command has run', async () => {
    const all = await messageDuringTurn('/compact', (n) => ({ text: `reply ${n}` }));
    expect(ofType(all, 'session.turn_ended').length).toBe(2);
  }, 120000);

  it("given the model calls Brainstem's report_progress, then claude reaches the service's MCP server as its session and the progress is recorded", async () => {
    const tool = 'mcp__brainstem__report_progress';
    const id = await startClaude((n) => (n === 1 ? { tool, input: { status: 'working', message: 'halfway through the parser' } } : { text: `reply ${n}` }));
    api.releaseAll();
    // The reserved server comes with every profile (here the default one); claude may ask before using its tool.
    await waitFor(
      async () => {
        const s = (await call('GET', `/${id}`)).body;
        if (s.state === 'pending_authorization') await call('POST', `/${id}/permission`, { decision: 'allow' });
        return s.state === 'pending_handling' || undefined;
      },
      { timeoutMs: 60000, what: 'the turn to end' },
    );
    expect((api.requests[0].tools ?? []).map((x) => x.name)).toContain(tool);
    expect(ofType(await events(id), 'session.progress')).toEqual([{ at: expect.any(Number), status: 'working', message: 'halfway through the parser' }]);
    // The tool's answer went back to the model: the session as the service sees it.
    expect(JSON.stringify(api.requests[1].messages)).toContain('tool_result');
  }, 120000);

  it("given the default profile and a worker outside Brainstem's sandbox, then claude runs Bash unasked in its own sandbox, as the profile's sandbox section turns it on", async () => {
    const id = await startClaude((n) => (n === 1 ? { tool: 'Bash', input: { command: 'make deploy' } } : { text: `reply ${n}` }));
    api.releaseAll();
    await untilState(id, 'pending_handling');
    const all = await events(id);
    expect(ofType(all, 'session.created')[0].sandbox).toEqual({ on: false, reason: 'BRAINSTEM_SANDBOX is off' });
    expect(ofType(all, 'session.permission_requested')).toEqual([]);
    // The command ran (make found no rule), and the model was told so.
    expect(JSON.stringify(api.requests[1].messages)).toContain("No rule to make target 'deploy'");
  }, 120000);

  it('given a tool call the supervisor denies, then claude gets the denial with its reason and the turn ends', async () => {
    // A profile without a sandbox section, so claude asks before Bash (the default one runs it in claude's own sandbox).
    const id = await startClaude((n) => (n === 1 ? { tool: 'Bash', input: { command: 'make deploy' } } : { text: `reply ${n}` }), { profile_id: 'documentation-writer' });
    api.releaseAll();
    await untilState(id, 'pending_authorization');
    expect((await call('POST', `/${id}/permission`, { decision: 'deny', reason: 'not in this repository' })).status).toBe(200);
    await untilState(id, 'pending_handling');
    const all = await events(id);
    expect(ofType(all, 'session.permission_requested')).toEqual([
      { at: expect.any(Number), request_id: expect.any(String), tool: 'Bash', input: { command: 'make deploy' } },
    ]);
    // The model's next request carries the tool result claude made of the denial.
    const toolResult = JSON.stringify(api.requests[1].messages);
    expect(toolResult).toContain('tool_result');
    expect(toolResult).toContain('not in this repository');
  }, 120000);

  it('given the service is SIGKILLed between turns, then after the restart claude is resumed and the next message continues the conversation', async () => {
    const journal = join(dirs.home.path, `journal-${Date.now()}`);
    const env = { ...(await fakeModel((n) => ({ text: `reply ${n}` }))), BRAINSTEM_JOURNAL_DIR: journal, BRAINSTEM_PROFILES_DIR: join(journal, 'profiles') };
    api.releaseAll();
    const services: ServiceProcess[] = [];
    const request = async (svc: ServiceProcess, method: string, path: string, body?: object) => {
      const res = await fetch(`${svc.url}/api/v1/coding-sessions${path}`, { method, headers: body ? { ...svc.auth, 'content-type': 'application/json' } : svc.auth, body: body ? JSON.stringify(body) : undefined });
      return (await res.json()) as { id: string; state: string; pid: number | null };
    };
    const pending = (svc: ServiceProcess, id: string) => waitFor(async () => (await request(svc, 'GET', `/${id}`)).state === 'pending_handling' || undefined, { timeoutMs: 60000, what: 'the turn to end' });
    try {
      const first = await startService(env);
      services.push(first);
      const session = await request(first, 'POST', '', { cwd: dirs.cwd.path, runtime: 'claude-code', prompt: 'remember the word zebra' });
      reaper.track(session.pid);
      await pending(first, session.id);
      first.child.kill('SIGKILL');
      await first.exited;

      const second = await startService(env);
      services.push(second);
      const resumed = await request(second, 'GET', `/${session.id}`);
      expect(resumed.state).toBe('pending_handling');
      expect(resumed.pid).not.toBe(session.pid);
      reaper.track(resumed.pid);
      await request(second, 'POST', `/${session.id}/messages`, { text: 'which word?' });
      await waitFor(async () => api.requests.some((r) => JSON.stringify(r.messages).includes('which word?')) || undefined, { timeoutMs: 60000, what: 'the next turn' });
      await pending(second, session.id);
      // The resumed claude sent the model the whole conversation: the first exchange came back from its transcript.
      const next = JSON.stringify(api.requests.find((r) => JSON.stringify(r.messages).includes('which word?'))!.messages);
      expect(next).toContain('remember the word zebra');
      expect(next).toContain('reply 1');
    } finally {
      for (const svc of services) if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
    }
  }, 180000);

  it.each([
    ['allow', 'allow', true],
    ['deny', 'deny', false],
  ])(
    'given claude run as a command worker with --permission-prompt-tool mcp__brainstem__permission_prompt, when the supervisor answers %s, then claude acts on that answer',
    async (_, decision, ran) => {
      const marker = join(dirs.cwd.path, `deployed-${decision}`);
      const env = await fakeModel((n) => (n === 1 ? { tool: 'Bash', input: { command: `touch ${marker}` } } : { text: `reply ${n}` }));
      api.releaseAll();
      const mcpConfig = join(dirs.home.path, `worker-mcp-${decision}.json`);
      // What a worker's MCP config holds: references to its own session and credential, expanded by claude from its environment.
      writeFileSync(
        mcpConfig,
        JSON.stringify({ mcpServers: { brainstem: { type: 'http', url: `${t.url}/mcp`, headers: { 'X-Brainstem-Session': '${BRAINSTEM_SESSION_ID}', Authorization: 'Bearer ${BRAINSTEM_TOKEN}' } } } }),
      );
      const args = ['-p', 'deploy it', '--permission-prompt-tool', 'mcp__brainstem__permission_prompt', '--mcp-config', mcpConfig];
      const started = await call('POST', '', { cwd: dirs.cwd.path, command: 'claude', args, env });
      expect(started.status).toBe(201);
      reaper.track(started.body.pid);
      const id = started.body.id;
      await untilState(id, 'pending_authorization');
      expect((await events(id)).filter((e) => e.type === 'session.permission_requested').map((e) => e.data)).toEqual([
        { at: expect.any(Number), request_id: expect.any(String), tool: 'Bash', input: { command: `touch ${marker}` } },
      ]);
      const reason = decision === 'deny' ? { reason: 'not in this repository' } : {};
      expect((await call('POST', `/${id}/permission`, { decision, ...reason })).status).toBe(200);
      await untilState(id, 'exited');
      // Allowed, the command ran; denied, it did not, and the model was told why.
      expect(existsSync(marker)).toBe(ran);
      const toolResult = JSON.stringify(api.requests[api.requests.length - 1].messages);
      expect(toolResult).toContain('tool_result');
      if (!ran) expect(toolResult).toContain('not in this repository');
    },
    120000,
  );

  /** A profile whose deny rules are `deny`: its id. */
  async function profileDenying(name: string, deny: string[]): Promise<string> {
    const res = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: { name, permissions: { deny } } });
    expect(res.statusCode).toBe(201);
    return res.json().id as string;
  }

  /** The session's permission events: each request denied as it arrived carries its rule, and none was ever pending. */
  async function deniedOnArrival(id: string, rule: string, command: string): Promise<void> {
    const all = await events(id);
    expect(all.filter((e) => e.type.startsWith('session.permission_')).map((e) => [e.type, e.data])).toEqual([
      ['session.permission_resolved', expect.objectContaining({ decision: 'deny', by: 'profile', rule, tool: 'Bash', input: { command } })],
    ]);
    expect(ofType(all, 'session.state_changed').map((d) => d.to)).not.toContain('pending_authorization');
  }

  it("given a session whose profile came to deny a command after it started, when claude asks to run it, then it is denied as it arrives and the model is told the rule", async () => {
    const profileId = await profileDenying('Deploys Later Denied', []);
    const id = await startClaude((n) => (n === 1 ? { tool: 'Bash', input: { command: 'make deploy' } } : { text: `reply ${n}` }), { profile_id: profileId });
    // Claude started with the profile as it was: it asks Brainstem, whose rules are the profile's now.
    expect((await t.inject({ method: 'PATCH', url: `/api/v1/agent-profiles/${profileId}`, payload: { permissions: { deny: ['Bash(make deploy)'] } } })).statusCode).toBe(200);
    api.releaseAll();
    await untilState(id, 'pending_handling');
    await deniedOnArrival(id, 'Bash(make deploy)', 'make deploy');
    const toolResult = JSON.stringify(api.requests[1].messages);
    expect(toolResult).toContain('tool_result');
    expect(toolResult).toContain('rule Bash(make deploy)');
  }, 120000);

  it('given claude run as a command worker with the permission_prompt tool, when it asks for a command its profile denies, then it is denied as it arrives and the command does not run', async () => {
    const marker = join(dirs.cwd.path, 'deployed-denied-on-arrival');
    const profileId = await profileDenying('No Touching', ['Bash(touch *)']);
    const env = await fakeModel((n) => (n === 1 ? { tool: 'Bash', input: { command: `touch ${marker}` } } : { text: `reply ${n}` }));
    api.releaseAll();
    const mcpConfig = join(dirs.home.path, 'worker-mcp-denied.json');
    writeFileSync(
      mcpConfig,
      JSON.stringify({ mcpServers: { brainstem: { type: 'http', url: `${t.url}/mcp`, headers: { 'X-Brainstem-Session': '${BRAINSTEM_SESSION_ID}', Authorization: 'Bearer ${BRAINSTEM_TOKEN}' } } } }),
    );
    const args = ['-p', 'deploy it', '--permission-prompt-tool', 'mcp__brainstem__permission_prompt', '--mcp-config', mcpConfig];
    const started = await call('POST', '', { cwd: dirs.cwd.path, command: 'claude', args, env, profile_id: profileId });
    expect(started.status).toBe(201);
    reaper.track(started.body.pid);
    await untilState(started.body.id, 'exited');
    expect(existsSync(marker)).toBe(false);
    await deniedOnArrival(started.body.id, 'Bash(touch *)', `touch ${marker}`);
    expect(JSON.stringify(api.requests[api.requests.length - 1].messages)).toContain('rule Bash(touch *)');
  }, 120000);

  it("given claude run as a command worker with Brainstem's stdio bridge as its MCP server, then the model's report_progress is recorded on the session", async () => {
    const report = { status: 'working', message: 'over stdio' };
    const env = await fakeModel((n) => (n === 1 ? { tool: 'mcp__brainstem__report_progress', input: report } : { text: `reply ${n}` }));
    api.releaseAll();
    // The bridge sends BRAINSTEM_SESSION_ID, which every worker has in its environment, as the session header.
    const bridge = { type: 'stdio', command: process.execPath, args: [join(__dirname, '../../bin/brainstem.js'), 'mcp', '--url', t.url] };
    const mcpConfig = join(dirs.home.path, 'worker-mcp-stdio.json');
    writeFileSync(mcpConfig, JSON.stringify({ mcpServers: { brainstem: bridge } }));
    const args = ['-p', 'report in', '--mcp-config', mcpConfig, '--allowedTools', 'mcp__brainstem__report_progress'];
    const started = await call('POST', '', { cwd: dirs.cwd.path, command: 'claude', args, env });
    expect(started.status).toBe(201);
    reaper.track(started.body.pid);
    await untilState(started.body.id, 'exited');
    expect(ofType(await events(started.body.id), 'session.progress')).toEqual([{ at: expect.any(Number), ...report }]);
  }, 120000);

  it("given a session started with a profile, then claude accepts the profile's flags and the model gets its model and system prompt", async () => {
    const created = await t.inject({
      method: 'POST',
      url: '/api/v1/agent-profiles',
      payload: {
        name: 'Planner',
        model: { model: 'claude-sonnet-4-5' },
        instructions: { system_prompt: 'Plan only; never edit.' },
        tools: { builtin: ['Read', 'Grep'], deny: ['WebFetch'] },
        permissions: { mode: 'plan', deny: ['Bash(rm:*)'] },
      },
    });
    expect(created.statusCode).toBe(201);
    const id = await startClaude((n) => ({ text: `reply ${n}` }), { profile_id: created.json().id });
    api.releaseAll();
    await untilState(id, 'pending_handling');
    const first = api.requests[0];
    expect(first.model).toBe('claude-sonnet-4-5');
    expect(JSON.stringify(first.system)).toContain('Plan only; never edit.');
    expect((first.tools ?? []).map((x) => x.name)).not.toContain('WebFetch');
  }, 120000);
});

/**
 * Files applied for claude-code as the real claude reads them: `claude doctor` validates a project's
 * .claude/settings.json with claude's own settings schema, and a headless turn shows whether the profile's
 * agent file was found and parsed (the "agent" setting makes its body the system prompt).
 */
(REAL_CLAUDE ? describe : describe.skip)('profiles applied for claude-code, read by a real claude', () => {
  const home = tempDir('brainstem-claude-home-');
  const work = tempDir('brainstem-claude-apply-');

  const t = useTestApp({}, { listen: true });
  afterAll(async () => {
    // A `claude doctor` left waiting under a closed terminal may still be writing into the home: stopped first.
    await stopProcessesOfHome(home.path);
    home.remove();
    work.remove();
  });

  /**
   * `claude doctor` needs a terminal: run under script(1) until its report is complete. Claude up to 2.1.2xx ends it
   * with "Enter to close" and waits (it is closed then); 2.1.33x prints it and exits 0 by itself (script -e passes
   * that status on). The heading alone is no proof: run by npm with CI=true and no stdin, as .ci/run does, claude
   * 2.1.197 drew its spinner over one of its letters, and 2.1.33x no longer prints it.
   */
  function doctor(cwd: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn('script', ['-eqc', `'${REAL_CLAUDE}' doctor`, '/dev/null'], { cwd, env: { ...process.env, HOME: home.path, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' } });
      let out = '';
      // Escapes stripped, and spaces too: the screen is drawn with cursor moves between words.
      const text = () => out.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\s+/g, '');
      const waitsForEnter = () => /Entertoclose/.test(text());
      const timer = setTimeout(() => child.kill('SIGKILL'), 60000);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        if (waitsForEnter()) child.kill('SIGKILL');
      });
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        waitsForEnter() || code === 0 ? resolve(text()) : reject(new Error(`claude doctor did not complete its report (exit ${code}): ${text().slice(0, 500)}`));
      });
    });
  }

  async function applied(id: string): Promise<string> {
    const dir = join(work.path, id);
    mkdirSync(dir);
    const res = await t.inject({ method: 'POST', url: `/api/v1/agent-profiles/${id}/apply`, payload: { runtime: 'claude-code', dir } });
    expect(res.statusCode).toBe(200);
    return dir;
  }

  it('given a settings file claude does not accept, then the check sees it (the control)', async () => {
    const dir = join(work.path, 'control');
    mkdirSync(join(dir, '.claude'), { recursive: true });
    writeFileSync(join(dir, '.claude', 'settings.json'), JSON.stringify({ permissions: { defaultMode: 'sometimes' } }));
    expect(await doctor(dir)).toContain('Invalidsettings');
  }, 90000);

  it('given a profile with a model and fallbacks applied, then claude finds its settings, fallbackModel included, valid', async () => {
    const created = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: { name: 'With fallback', model: { model: 'claude-opus-4-8', fallback: ['claude-sonnet-4-6', 'claude-haiku-4-5'] } } });
    expect(created.statusCode).toBe(201);
    const dir = await applied(created.json().id);
    expect(JSON.parse(readFileSync(join(dir, '.claude', 'settings.json'), 'utf8'))).toMatchObject({ model: 'claude-opus-4-8', fallbackModel: ['claude-sonnet-4-6'] });
    expect(await doctor(dir)).not.toContain('Invalidsettings');
  }, 90000);

  it.each(BUILTIN_TEMPLATES.map((x) => [x.id, x.doc.instructions.system_prompt ?? '']))(
    'given the %s template applied, then claude finds its settings valid and runs as its agent',
    async (id, systemPrompt) => {
      expect(systemPrompt).not.toBe('');
      const dir = await applied(id);
      expect(await doctor(dir)).not.toContain('Invalidsettings');

      const api = new FakeAnthropicApi((n) => ({ text: `reply ${n}` }));
      const env = { ...process.env, ...claudeEnv(await api.start(), home.path) };
      api.releaseAll();
      try {
        const code = await new Promise<number | null>((resolve) => spawn(REAL_CLAUDE!, ['-p', 'hello'], { cwd: dir, env, stdio: 'ignore' }).on('close', resolve));
        expect(code).toBe(0);
        expect(JSON.stringify(api.requests[0].system)).toContain(JSON.stringify(systemPrompt.split('\n')[0]).slice(1, -1));
      } finally {
        await api.close();
      }
    },
    90000,
  );
  /** Marks `dir` trusted in claude's user config, as claude does when the user accepts its trust dialog there. */
  function trust(dir: string): void {
    const file = join(home.path, '.claude.json');
    const config = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { projects?: Record<string, object> }) : {};
    config.projects = { ...config.projects, [dir]: { ...config.projects?.[dir], hasTrustDialogAccepted: true } };
    writeFileSync(file, JSON.stringify(config));
  }

  /** `claude -p hello` started by hand in `dir`, on a fake model API whose replies `reply` chooses: its exit code. */
  async function byHand(dir: string, reply: (n: number) => ModelReply, env: Record<string, string>): Promise<{ code: number | null; api: FakeAnthropicApi }> {
    const api = new FakeAnthropicApi(reply);
    const base: NodeJS.ProcessEnv = { ...process.env, ...claudeEnv(await api.start(), home.path), BRAINSTEM_SESSION_ID: undefined, BRAINSTEM_TOKEN: undefined, ...env };
    api.releaseAll();
    try {
      const code = await new Promise<number | null>((resolve) => spawn(REAL_CLAUDE!, ['-p', 'hello'], { cwd: dir, env: base, stdio: 'ignore' }).on('close', resolve));
      return { code, api };
    } finally {
      await api.close();
    }
  }

  it("given a profile applied, when claude is started there by hand without a session's variables, then it still answers a turn", async () => {
    const created = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: { name: 'By hand' } });
    expect(created.statusCode).toBe(201);
    const dir = await applied(created.json().id);
    expect(readFileSync(join(dir, '.mcp.json'), 'utf8')).toContain('BRAINSTEM_TOKEN');
    const { code, api } = await byHand(dir, (n) => ({ text: `reply ${n}` }), {});
    expect(code).toBe(0);
    expect(api.requests.length).toBeGreaterThan(0);
  }, 90000);

  it("given a profile applied, when claude is started there with a worker's variables, then Brainstem's tools run without a permission prompt", async () => {
    const reaper = new WorkerReaper();
    try {
      const worker = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: work.path, command: process.execPath, args: [join(WORKERS, 'quiet.js')] } });
      expect(worker.statusCode).toBe(201);
      reaper.track(worker.json().pid);
      const id: string = worker.json().id;
      const created = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: { name: 'Reporter', permissions: { mode: 'default' } } });
      const dir = await applied(created.json().id);
      const report = { status: 'working', message: 'from a hand-started claude' };
      // A workspace the user has trusted (claude asks once, interactively): claude ignores an untrusted one's permission rules.
      trust(dir);
      // Headless, with no --permission-prompt-tool: a tool not allowed by the settings is refused, never run.
      const env = { BRAINSTEM_SESSION_ID: id, BRAINSTEM_TOKEN: t.tokenOf({ worker: id }), ENABLE_TOOL_SEARCH: 'false' };
      const { code } = await byHand(dir, (n) => (n === 1 ? { tool: 'mcp__brainstem__report_progress', input: report } : { text: `reply ${n}` }), env);
      expect(code).toBe(0);
      const events = await t.app.get<Journal>(JOURNAL).readStream(`session-${id}`);
      expect(events.filter((e) => e.type === 'session.progress').map((e) => e.data)).toEqual([{ at: expect.any(Number), ...report }]);
    } finally {
      reaper.killAll();
    }
  }, 90000);
});

/**
 * The loop the service exists for, with a real claude as the main brain (the command driver runs `claude -p` on
 * each round's prompt, connected to the service's MCP server without a session header): a supervised worker
 * blocks, a round wakes the brain, the brain's model tells the worker what to do and completes the round.
 */
(REAL_CLAUDE ? describe : describe.skip)('a real claude as the main brain', () => {
  const api = new FakeAnthropicApi((n, request) => brainReply(request));
  const reaper = new WorkerReaper();
  const dirs = { bin: tempDir('brainstem-claude-bin-'), home: tempDir('brainstem-claude-home-'), cwd: tempDir('brainstem-cwd-') };
  let worker = '';
  let brain = '';

  /** The brain's model: tell the blocked worker, then complete the round named in the prompt, then stop. */
  function brainReply(request: MessagesRequest): ModelReply {
    const conversation = JSON.stringify(request.messages);
    const round = /Supervision round (\S+) \(turn/.exec(conversation)?.[1];
    if (!conversation.includes('tool_use')) return { tool: 'mcp__brainstem__send_to_session', input: { session: worker, text: 'use the fixture in test/data' } };
    if (!conversation.includes('mcp__brainstem__complete_round')) return { tool: 'mcp__brainstem__complete_round', input: { round_id: round ?? 'none', summary: 'told the worker where the fixture is' } };
    return { text: 'done' };
  }

  beforeAll(async () => {
    symlinkSync(REAL_CLAUDE!, join(dirs.bin.path, 'claude'));
    const mcpConfig = join(dirs.home.path, 'brain-mcp.json');
    // ${BRAINSTEM_URL} and the brain's own ${BRAINSTEM_TOKEN}: claude expands them from the environment the command driver gives the brain.
    writeFileSync(
      mcpConfig,
      JSON.stringify({ mcpServers: { brainstem: { type: 'http', url: '${BRAINSTEM_URL}/mcp', headers: { Authorization: 'Bearer ${BRAINSTEM_TOKEN}' } } } }),
    );
    // The command driver runs the brain through sh -c with the service's environment: the fake API's goes in front.
    const assignments = Object.entries(claudeEnv(await api.start(), dirs.home.path, dirs.bin.path)).map(([k, v]) => `${k}='${v}'`);
    api.releaseAll();
    brain = `${assignments.join(' ')} claude -p --mcp-config '${mcpConfig}' --allowedTools 'mcp__brainstem__*'`;
  });
  const t = useTestApp(() => ({ BRAINSTEM_MAIN_BRAIN_DRIVER: 'command', BRAINSTEM_MAIN_BRAIN_COMMAND: brain, BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '50' }), {
    listen: true,
    beforeClose: () => reaper.killAll(),
  });
  afterAll(async () => {
    await api.close();
    // A round's brain is ended by the closing service, and may still be writing into the home: stopped first.
    await stopProcessesOfHome(dirs.home.path);
    for (const d of Object.values(dirs)) d.remove();
  });

  it('given a supervised worker blocks, then the brain is woken, tells the worker what to do and completes the round', async () => {
    const started = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: dirs.cwd.path, command: process.execPath, args: [join(WORKERS, 'quiet.js')] } });
    expect(started.statusCode).toBe(201);
    worker = started.json().alias;
    reaper.track(started.json().pid);
    expect((await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/autonomous', payload: { enabled: true, task_hint: 'make the tests pass' } })).statusCode).toBe(200);
    expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${worker}/signals`, payload: { type: 'notify_blocked', reason: 'cannot find the test fixture' } })).statusCode).toBe(200);

    const round = await waitFor(
      async () => {
        const rounds = (await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/rounds' })).json().rounds as Array<{ status: string; summary: string | null }>;
        return rounds.find((r) => r.status !== 'in_flight');
      },
      { timeoutMs: 90000, what: 'the round to end' },
    );
    expect(round).toMatchObject({ status: 'completed', summary: 'told the worker where the fixture is' });
    const events = await t.app.get<Journal>(JOURNAL).readStream(`session-${started.json().id}`);
    expect(events.filter((e) => e.type === 'session.message_dispatched').map((e) => (e.data as { text: string }).text)).toEqual(['use the fixture in test/data']);
    // The brain's model was handed the round's prompt: why it was woken.
    expect(JSON.stringify(api.requests[0].messages)).toContain('cannot find the test fixture');
  }, 120000);
});
