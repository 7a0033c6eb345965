import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { FakeAnthropicApi, ModelReply } from '../support/fake-anthropic-api';
import { TestApp, startTestApp } from '../support/test-app';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WorkerReaper, stopProcessesOfHome } from '../support/workers';

/**
 * Claude sessions started outside Brainstem, brought in by Brainstem's hooks: a real claude (BRAINSTEM_REAL_CLAUDE),
 * started by the test as a user starts it in a terminal, with HOME in a temp dir and a fake model API.
 */
const REAL_CLAUDE = process.env.BRAINSTEM_REAL_CLAUDE;

type Run = { code: number | null; stdout: string; stderr: string; ms: number; pid: number | undefined };

/** claude as a user runs it, outside Brainstem: its own process group, so a test that fails still ends it. */
function runClaude(args: string[], opts: { cwd: string; home: string; bin: string; api: string }, reaper: WorkerReaper): Promise<Run> {
  const env = {
    PATH: `${opts.bin}:${process.env.PATH}`,
    HOME: opts.home,
    ANTHROPIC_BASE_URL: opts.api,
    ANTHROPIC_API_KEY: 'sk-ant-fake',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  const started = Date.now();
  const child = spawn(REAL_CLAUDE!, args, { cwd: opts.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  reaper.track(child.pid);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started, pid: child.pid })));
}

type Status = {
  id: string;
  pid: number | null;
  alias: string;
  state: string;
  cwd: string;
  origin: string;
  excluded: boolean;
  exit_reason: string | null;
  pending: { kind: string; tool?: string; request_id?: string } | null;
  external: { claude_session_id: string; transcript_path: string | null } | null;
};

(REAL_CLAUDE ? describe : describe.skip)('claude sessions started outside Brainstem, reporting through its hooks (a real claude)', () => {
  const dirs = { bin: tempDir('brainstem-hooks-bin-'), home: tempDir('brainstem-hooks-home-'), cwd: tempDir('brainstem-hooks-cwd-'), project: tempDir('brainstem-hooks-project-') };
  const reaper = new WorkerReaper();
  let api: FakeAnthropicApi;

  beforeAll(() => symlinkSync(REAL_CLAUDE!, join(dirs.bin.path, 'claude')));
  // The service's home is claude's: the user scope is its ~/.claude, and transcripts are read under its ~/.claude/projects.
  const t = useTestApp(
    () => ({ BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '100' }),
    REAL_CLAUDE ? { listen: true, host: { env: { ...process.env, HOME: dirs.home.path }, home: dirs.home.path, cwd: dirs.cwd.path } } : {},
  );
  afterEach(async () => {
    reaper.killAll();
    await api?.close();
    await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/autonomous', payload: { enabled: false } });
  });
  afterAll(async () => {
    await stopProcessesOfHome(dirs.home.path);
    for (const d of Object.values(dirs)) d.remove();
  });

  const userSettings = () => join(dirs.home.path, '.claude', 'settings.json');

  async function model(reply: (n: number) => ModelReply): Promise<string> {
    api = new FakeAnthropicApi(reply);
    const url = await api.start();
    api.releaseAll();
    return url;
  }

  const claude = async (args: string[], reply: (n: number) => ModelReply, cwd = dirs.cwd.path) =>
    runClaude(args, { cwd, home: dirs.home.path, bin: dirs.bin.path, api: await model(reply) }, reaper);

  const hooks = async (verb: 'install' | 'uninstall', payload: object) => {
    const res = await t.inject({ method: 'POST', url: `/api/v1/external/claude-hooks/${verb}`, payload });
    expect(res.statusCode).toBe(200);
    return res.json() as { path: string; written: boolean; diff: string; backup_path: string | null; restored?: string };
  };

  const sessions = async (): Promise<Status[]> => (await t.inject({ method: 'GET', url: '/api/v1/coding-sessions?limit=500' })).json().sessions;
  const sessionOf = async (claudeSessionId: string): Promise<Status | undefined> => (await sessions()).find((s) => s.external?.claude_session_id === claudeSessionId);
  /** The external session a claude run started now: the newest one not seen before. */
  const newExternal = (before: ReadonlySet<string>, what: (s: Status) => boolean, label: string) =>
    waitFor(async () => (await sessions()).find((s) => s.origin === 'external' && !before.has(s.id) && what(s)), { timeoutMs: 60000, what: label });
  const states = async (id: string) =>
    (await t.app.get<Journal>(JOURNAL).readStream(`session-${id}`)).filter((e) => e.type === 'session.state_changed').map((e) => (e.data as { to: string }).to);
  const supervise = (payload: object) => t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/autonomous', payload });

  it("given the hooks installed in user scope, when claude -p runs outside Brainstem, then it is an external session whose state follows claude's events, and the user's own hook still runs", async () => {
    // Given the user's own settings, with a hook of theirs
    const marker = join(dirs.home.path, 'own-hook-ran');
    mkdirSync(join(dirs.home.path, '.claude'), { recursive: true });
    const own = { model: 'claude-sonnet-4-5', hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: `touch ${marker}` }] }] } };
    writeFileSync(userSettings(), JSON.stringify(own, null, 2) + '\n');
    const ownBytes = readFileSync(userSettings());
    const installed = await hooks('install', { scope: 'user' });
    expect(installed).toMatchObject({ written: true, path: userSettings(), backup_path: `${userSettings()}.brainstem-backup` });
    const settings = JSON.parse(readFileSync(userSettings(), 'utf8'));
    expect(settings.model).toBe('claude-sonnet-4-5');
    expect(settings.hooks.UserPromptSubmit[0]).toEqual(own.hooks.UserPromptSubmit[0]);
    expect(Object.keys(settings.hooks).sort()).toEqual(['Notification', 'PermissionRequest', 'PreToolUse', 'SessionEnd', 'SessionStart', 'Stop', 'UserPromptSubmit']);

    // When claude runs in a terminal of its own
    const run = await claude(['-p', 'hello there'], (n) => ({ text: `reply ${n}` }));

    // Then it ran as usual, and it is an external session that worked, stopped and ended
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('reply 1');
    expect(existsSync(marker)).toBe(true);
    const s = await waitFor(async () => (await sessions()).find((x) => x.origin === 'external' && x.state === 'exited'), { timeoutMs: 30000, what: 'the external session exited' });
    // claude's pid, as claude gives it to its hooks (CLAUDE_PID), checked by the service against /proc
    expect(s).toMatchObject({ cwd: dirs.cwd.path, excluded: true, exit_reason: 'exited', pid: run.pid });
    const transcript = s.external?.transcript_path ?? '';
    expect(transcript.startsWith(join(dirs.home.path, '.claude', 'projects') + '/') && transcript.endsWith(`/${s.external?.claude_session_id}.jsonl`)).toBe(true);
    expect(await states(s.id)).toEqual(['working', 'pending_handling', 'exited']);
    // Its output is its transcript
    const output = (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${s.id}/output` })).json().lines as string[];
    expect(output).toEqual(expect.arrayContaining(['user: hello there', 'claude: reply 1']));

    // And uninstalling puts the user's settings back, byte for byte
    expect(await hooks('uninstall', { scope: 'user' })).toMatchObject({ written: true, restored: 'original' });
    expect(readFileSync(userSettings()).equals(ownBytes)).toBe(true);
  }, 120000);

  it("given supervision on with external sessions included, when the brain sends the stopped session a message, then claude's Stop hook continues it and its next model request carries the text", async () => {
    await hooks('install', { scope: 'user' });
    expect((await supervise({ enabled: true, include_external: true })).statusCode).toBe(200);
    const before = new Set((await sessions()).map((s) => s.id));
    const running = claude(['-p', 'write the parser'], (n) => ({ text: `reply ${n}` }));

    // The stop wakes a round: the Stop hook waits for it
    const s = await newExternal(before, (x) => x.state === 'pending_handling', 'the external session stopped');
    expect(s.excluded).toBe(false);
    const round = await waitFor(
      async () => {
        const rounds = (await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/rounds', headers: t.auth('main_brain') })).json().rounds;
        return rounds.find((r: { status: string; reasons: Array<{ session_id: string }> }) => r.status === 'in_flight' && r.reasons.some((x) => x.session_id === s.id));
      },
      { timeoutMs: 30000, what: 'a round for the stop' },
    );
    const sent = await t.inject({
      method: 'POST',
      url: '/api/v1/session-os/main-brain/tools/send_to_session',
      headers: t.auth('main_brain'),
      payload: { session: s.alias, text: 'CONTINUE: now write its tests' },
    });
    expect(sent.statusCode).toBe(200);
    await waitFor(() => api.requests.length >= 2, { timeoutMs: 60000, what: "claude's next model request" });
    expect(JSON.stringify(api.requests[1].messages)).toContain('CONTINUE: now write its tests');

    // Supervision off: the next stop does not wait, and claude ends
    await t.inject({ method: 'POST', url: `/api/v1/session-os/main-brain/rounds/${round.id}/complete`, headers: t.auth('main_brain'), payload: {} });
    await supervise({ enabled: false });
    const run = await running;
    expect(run.code).toBe(0);
    expect(await states(s.id)).toEqual(['working', 'pending_handling', 'working', 'pending_handling', 'exited']);
  }, 180000);

  it.each([
    ['allow', null],
    ['deny', 'not in this repository'],
  ] as const)("given a supervised external session's PermissionRequest, when it is answered %s, then claude acts on that answer", async (decision, reason) => {
    await hooks('install', { scope: 'user' });
    await supervise({ enabled: true, include_external: true });
    const made = join(dirs.cwd.path, `made-by-${decision}`);
    const before = new Set((await sessions()).map((s) => s.id));
    const running = claude(['-p', 'make the file'], (n) => (n === 1 ? { tool: 'Bash', input: { command: `touch ${made}`, description: 'make the file' } } : { text: `reply ${n}` }));

    const s = await newExternal(before, (x) => x.state === 'pending_authorization', 'the permission request');
    expect(s.pending).toMatchObject({ kind: 'permission', tool: 'Bash' });
    const answered = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/permission`, payload: { decision, ...(reason ? { reason } : {}) } });
    expect(answered.statusCode).toBe(200);
    await waitFor(() => api.requests.length >= 2, { timeoutMs: 60000, what: "claude's request after the tool" });
    await supervise({ enabled: false });
    expect((await running).code).toBe(0);

    const toolResult = JSON.stringify(api.requests[1].messages);
    if (decision === 'allow') {
      expect(existsSync(made)).toBe(true);
      expect(toolResult).toContain('"is_error":false');
    } else {
      expect(existsSync(made)).toBe(false);
      expect(toolResult).toContain(reason);
    }
  }, 180000);

  it('given the hooks installed in project scope only, when claude -p runs in that project, then it is an external session there; uninstalling removes the file it created', async () => {
    await hooks('uninstall', { scope: 'user' });
    expect(readFileSync(userSettings(), 'utf8')).not.toContain('brainstem.js');
    const local = join(dirs.project.path, '.claude', 'settings.local.json');
    const installed = await hooks('install', { scope: 'project', project_dir: dirs.project.path });
    expect(installed).toMatchObject({ written: true, path: local, backup_path: null });

    const run = await claude(['-p', 'hello project'], (n) => ({ text: `reply ${n}` }), dirs.project.path);
    expect(run.code).toBe(0);
    const s = await waitFor(async () => (await sessions()).find((x) => x.origin === 'external' && x.cwd === dirs.project.path && x.state === 'exited'), {
      timeoutMs: 30000,
      what: 'the project session',
    });
    expect(await sessionOf(s.external!.claude_session_id)).toMatchObject({ id: s.id });

    expect(await hooks('uninstall', { scope: 'project', project_dir: dirs.project.path })).toMatchObject({ written: true, restored: 'original' });
    expect(existsSync(local)).toBe(false);
    expect(existsSync(join(dirs.project.path, '.claude'))).toBe(false);
  }, 120000);
});

(REAL_CLAUDE ? describe : describe.skip)('a broken Brainstem never slows a claude started outside it (a real claude)', () => {
  const dirs = { bin: tempDir('brainstem-hooks-bin-'), home: tempDir('brainstem-hooks-home-'), cwd: tempDir('brainstem-hooks-cwd-') };
  const reaper = new WorkerReaper();
  let api: FakeAnthropicApi;
  let app: TestApp | null = null;

  afterAll(async () => {
    reaper.killAll();
    await app?.close();
    await api?.close();
    await stopProcessesOfHome(dirs.home.path);
    for (const d of Object.values(dirs)) d.remove();
  });

  it('given the hooks installed and the service then stopped, when claude -p runs, then it finishes normally within its usual time plus at most 1 s', async () => {
    symlinkSync(REAL_CLAUDE!, join(dirs.bin.path, 'claude'));
    api = new FakeAnthropicApi((n) => ({ text: `reply ${n}` }));
    const opts = { cwd: dirs.cwd.path, home: dirs.home.path, bin: dirs.bin.path, api: await api.start() };
    api.releaseAll();
    const settings = join(dirs.home.path, '.claude', 'settings.json');
    // A first run sets claude's home up; it is not measured.
    expect((await runClaude(['-p', 'warm up'], opts, reaper)).code).toBe(0);
    const without = existsSync(settings) ? readFileSync(settings, 'utf8') : null;

    app = await startTestApp({}, { listen: true, host: { env: { ...process.env, HOME: dirs.home.path }, home: dirs.home.path, cwd: dirs.cwd.path } });
    const res = await app.inject({ method: 'POST', url: '/api/v1/external/claude-hooks/install', payload: { scope: 'user' } });
    expect(res.json()).toMatchObject({ written: true });
    const withHooks = readFileSync(settings, 'utf8');
    await app.close();
    app = null;

    // Alternately without the hooks and with them (the service down), so both see the same load
    const usual: number[] = [];
    const down: number[] = [];
    for (let i = 0; i < 3; i++) {
      if (without === null) rmSync(settings, { force: true });
      else writeFileSync(settings, without);
      const plain = await runClaude(['-p', 'hello'], opts, reaper);
      writeFileSync(settings, withHooks);
      const hooked = await runClaude(['-p', 'hello'], opts, reaper);
      expect([plain.code, hooked.code]).toEqual([0, 0]);
      expect(hooked.stdout).toContain('reply');
      usual.push(plain.ms);
      down.push(hooked.ms);
    }
    console.info(`claude -p without hooks: ${usual.join(', ')} ms; with the hooks and the service down: ${down.join(', ')} ms`);
    expect(Math.min(...down)).toBeLessThanOrEqual(Math.min(...usual) + 1000);
  }, 240000);
});
