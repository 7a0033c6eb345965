import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main';
import type { SessionStatus } from '../../src/sessions/session.status';
import { SessionsService } from '../../src/sessions/sessions.service';
import { TestApp, startTestApp } from '../support/test-app';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WorkerReaper } from '../support/workers';

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** `brainstem <args>` in this process, with exactly `env`; what it printed and its exit code. */
async function brainstem(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Ran> {
  const ran = { out: '', err: '' };
  const code = await main(args, {
    io: { out: (l) => (ran.out += `${l}\n`), err: (l) => (ran.err += `${l}\n`) },
    env,
    cwd: process.cwd(),
    stdin: new PassThrough(),
    stdout: new PassThrough(),
  });
  return { code, ...ran };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** The CLI against the real service (in-process, on a real port), its workers the fake claude. */
describe('the brainstem CLI', () => {
  const path = process.env.PATH;
  const work = tempDir('brainstem-cli-work-');
  const reaper = new WorkerReaper();
  let t: TestApp;
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]) => brainstem(env, ...args);
  const json = async <T>(...args: string[]): Promise<T> => {
    const r = await cli(...args, '--json');
    if (r.code !== 0) throw new Error(`brainstem ${args.join(' ')} exited ${r.code}: ${r.err}`);
    return JSON.parse(r.out) as T;
  };
  const show = (session: string) => json<SessionStatus>('show', session);
  const stateOf = (session: string, state: string) => waitFor(async () => ((await show(session)).state === state ? show(session) : undefined), { what: `${session} to be ${state}` });
  const output = async (session: string) => (await json<{ lines: string[] }>('logs', session, '-n', '200')).lines.join('\n');

  beforeAll(async () => {
    // The service finds the fake claude on its own PATH.
    process.env.PATH = `${FAKE_BIN}${delimiter}${path}`;
    t = await startTestApp({}, { listen: true });
    env = { BRAINSTEM_URL: t.url, BRAINSTEM_API_TOKEN: t.token };
  });
  afterAll(async () => {
    reaper.killAll();
    await t.close();
    process.env.PATH = path;
    work.remove();
  });

  it('starts a worker, lists and shows it, approves and denies its permission requests, and sends it a message', async () => {
    // Given no session
    expect(await json('ls')).toEqual([]);

    // When a worker is started whose first turn asks permission for a command
    const started = await json<SessionStatus>('start', '--runtime', 'claude-code', '--cwd', work.path, '--title', 'build it', 'use a tool');
    reaper.track(started.pid);
    expect(started).toMatchObject({ alias: 'w1', runtime: 'claude-code', cwd: work.path, title: 'build it' });
    // Then it is listed and shown waiting for that permission
    const waiting = await stateOf('w1', 'pending_authorization');
    expect(waiting.pending).toMatchObject({ kind: 'permission', tool: 'Bash', input: { command: 'npm run build' } });
    expect((await json<SessionStatus[]>('ls', '--state', 'pending_authorization')).map((s) => s.alias)).toEqual(['w1']);
    expect(await json('ls', '--state', 'exited')).toEqual([]);
    const table = await cli('ls');
    // The harness runs workers unsandboxed (BRAINSTEM_SANDBOX=off), which ls marks beside the runtime.
    expect(table.out).toMatch(/^ALIAS +STATE +RUNTIME +SINCE +COST +TITLE +WAITS FOR\nw1 +pending_authorization +claude-code UNSANDBOXED +\d+s +~?\$\d+\.\d+ +build it +permission Bash: npm run build\n$/);
    expect((await cli('show', 'w1')).out).toContain('waits for   permission req-1: Bash {"command":"npm run build"}');

    // When it is approved, the tool runs and the turn ends
    const allowed = await cli('approve', 'w1');
    expect(allowed).toEqual({ code: 0, out: "allowed w1's permission Bash: npm run build; it is working\n", err: '' });
    await stateOf('w1', 'pending_handling');
    expect(await output('w1')).toContain('"result":"tool allow"');

    // When it asks again and is denied with a reason
    expect((await cli('send', 'w1', 'use a tool')).out).toBe('sent to w1; it is working\n');
    await stateOf('w1', 'pending_authorization');
    expect((await cli('approve', 'w1', '--deny', 'not on main')).out).toMatch(/^denied w1's permission Bash: npm run build; it is /);
    await stateOf('w1', 'pending_handling');
    expect(await output('w1')).toContain('"result":"tool deny"');

    // And with nothing pending, approve prints the service's code and exits 1
    expect(await cli('approve', 'w1')).toMatchObject({ code: 1, out: '', err: expect.stringMatching(/^brainstem approve: 409 permission_not_pending: /) });

    // And a message is answered (the fake claude echoes it)
    const sent = await json<SessionStatus>('send', 'w1', 'hello there');
    expect(sent).toMatchObject({ alias: 'w1', state: 'working' });
    await stateOf('w1', 'pending_handling');
    expect(await output('w1')).toContain('"result":"echo: hello there"');
  });

  it('shows a session Brainstem held, with why, and releases it', async () => {
    // Given w1 (from the spec before) held, as a loop's escalation holds a session
    await t.app.get(SessionsService).hold('w1', 'loop', 'the same call failed 5 times', 'supervision');
    expect((await cli('ls')).out).toMatch(/^w1 .* held: the same call failed 5 times$/m);
    expect((await cli('show', 'w1')).out).toMatch(/^held +loop: the same call failed 5 times \(\d+s ago; brainstem release w1\)$/m);
    expect((await cli('show', 'w1')).out).toMatch(/^spent +\d+ tokens, ~?\$\d+\.\d+ in \d+ turn\(s\)$/m);
    // When it is released, Then it takes messages again
    expect(await cli('release', 'w1')).toEqual({ code: 0, out: 'released w1; it is pending_handling\n', err: '' });
    expect((await show('w1')).held).toBeNull();
    // And releasing it again changes nothing
    expect(await cli('release', 'w1')).toEqual({ code: 0, out: 'released w1; it is pending_handling\n', err: '' });
  });

  it("shows a session its model's limit parked, counting down to the reset; keeps it parked, then resumes it", async () => {
    // Given a worker whose first turn its model's rate limit refuses (the fake claude's resets in an hour)
    const { alias, pid } = await json<SessionStatus>('start', '--runtime', 'claude-code', '--cwd', work.path, '--title', 'limited', 'hit the rate limit');
    reaper.track(pid);
    const parked = await waitFor(async () => (await show(alias)).parked ?? undefined, { what: `${alias} to be parked` });
    expect(parked).toMatchObject({ reason: 'rate_limit', source: 'runtime', limit_type: 'five_hour', attempt: 1, resumes_at: expect.stringMatching(/^\d{4}-/) });
    // Then ls and show flag it, with the time left and the clock time it resumes at (its date too, past midnight)
    const countdown = '· resumes in (59m|1h) \\((\\d{4}-\\d\\d-\\d\\d )?\\d\\d:\\d\\d\\)';
    expect((await cli('ls')).out).toMatch(new RegExp(`^${alias} .* limited +parked \\(rate limit\\) ${countdown}$`, 'm'));
    expect((await cli('show', alias)).out).toMatch(new RegExp(`^limit +parked \\(rate limit\\) ${countdown}; five_hour, attempt 1, parked \\d+s ago \\(brainstem resume ${alias}\\)$`, 'm'));

    // When it is kept parked, Then it waits past the reset until resumed, and says so
    expect(await cli('resume', alias, '--keep-parked')).toEqual({ code: 0, out: `kept ${alias} parked until resumed (brainstem resume ${alias})\n`, err: '' });
    expect((await show(alias)).parked).toMatchObject({ resumes_at: null, source: 'user' });
    expect((await cli('ls')).out).toMatch(new RegExp(`^${alias} .* limited +parked \\(rate limit\\) · kept parked$`, 'm'));
    expect((await cli('show', alias)).out).toMatch(/^limit +parked \(rate limit\) · kept parked; five_hour, attempt 1, parked \d+s ago/m);

    // When it is resumed, Then it is no longer parked and its worker continues (the fake claude echoes what it got)
    expect(await cli('resume', alias)).toEqual({ code: 0, out: `resumed ${alias}; it is working\n`, err: '' });
    expect((await show(alias)).parked).toBeNull();
    await stateOf(alias, 'pending_handling');
    expect(await output(alias)).toContain('"result":"echo: Your model usage limit has reset. Continue where you stopped."');
    expect((await cli('show', alias)).out).not.toMatch(/^limit /m);

    // And resuming a session not parked prints the service's 409 and exits 1
    expect(await cli('resume', alias)).toEqual({ code: 1, out: '', err: `brainstem resume: 409 session_not_parked: session ${alias} is not parked at a limit\n` });
  });

  it('turns supervision on with a goal and off, and reports it in status', async () => {
    const on = await json<{ enabled: boolean; task_hint: string; max_turns: number }>('supervise', 'on', '--goal', 'ship it', '--max-turns', '5');
    expect(on).toMatchObject({ enabled: true, task_hint: 'ship it', max_turns: 5 });
    const status = await json<{ url: string; supervision: { enabled: boolean }; ready: { journal: { open: boolean } } }>('status');
    expect(status).toMatchObject({ url: t.url, supervision: { enabled: true, task_hint: 'ship it' }, ready: { journal: { open: true } } });
    expect((await cli('status')).out).toMatch(/^supervision +on: goal "ship it", 0 of 5 turns used$/m);
    expect(await cli('supervise', 'off')).toEqual({ code: 0, out: 'supervision off (disabled)\n', err: '' });
    expect((await json<{ enabled: boolean }>('supervise', 'off')).enabled).toBe(false);
    // The claude sessions run outside Brainstem join only when asked
    expect((await json<{ scope: { include_external: boolean } }>('supervise', 'on', '--include-external')).scope.include_external).toBe(true);
    expect(await cli('supervise', 'off', '--include-external')).toMatchObject({ code: 2 });
    await cli('supervise', 'off');
  });

  it("installs Brainstem's hooks in a project after showing the preview, only once confirmed, and takes them out again", async () => {
    const project = tempDir('brainstem-cli-hooks-');
    try {
      const local = resolve(project.path, '.claude', 'settings.local.json');
      // The preview: the file's diff, nothing written
      const preview = await cli('hooks', 'install', '--scope', 'project', '--project', project.path, '--dry-run');
      expect(preview).toMatchObject({ code: 0, out: expect.stringContaining(`+++ ${local}`) });
      expect(preview.out).toContain('hook SessionStart --url');
      expect(existsSync(local)).toBe(false);
      // Not confirmed (no terminal to ask on): nothing written, exit 1
      expect(await cli('hooks', 'install', '--scope', 'project', '--project', project.path)).toMatchObject({ code: 1, err: expect.stringContaining('nothing written (confirm with --yes') });
      expect(existsSync(local)).toBe(false);
      expect(await cli('hooks', 'install', '--scope', 'project', '--project', project.path, '--yes')).toMatchObject({ code: 0, out: expect.stringContaining(`Brainstem's hooks installed into ${local}`) });
      expect(Object.keys(JSON.parse(readFileSync(local, 'utf8')).hooks)).toHaveLength(7);
      expect((await json<Array<{ path: string }>>('hooks', 'status')).map((i) => i.path)).toEqual([local]);
      expect(await cli('hooks', 'install', '--scope', 'project', '--project', project.path)).toMatchObject({ code: 0, out: expect.stringContaining('already: nothing to change') });
      expect(await cli('hooks', 'uninstall', '--scope', 'project', '--project', project.path, '-y')).toMatchObject({ code: 0, out: expect.stringContaining('restored, byte for byte,') });
      expect(existsSync(local)).toBe(false);
      expect(await cli('hooks', 'install', '--project', project.path)).toMatchObject({ code: 2, err: expect.stringContaining('--project goes with --scope project') });
      expect(await cli('hooks', 'reinstall')).toMatchObject({ code: 2 });
    } finally {
      project.remove();
    }
  });

  it("answers a missing session with the service's 404 code and message, exit 1", async () => {
    for (const args of [['show', 'w99'], ['send', 'w99', 'hi'], ['approve', 'w99'], ['resume', 'w99'], ['logs', 'w99'], ['logs', 'w99', '-f']]) {
      const r = await cli(...args);
      expect({ args, ...r }).toEqual({ args, code: 1, out: '', err: expect.stringMatching(new RegExp(`^brainstem ${args[0]}: 404 not_found: no coding session "w99"`)) });
    }
  });

  it('prints the usage and exits 2 on an unknown command, an unknown flag, a missing or extra argument, a bad value', async () => {
    const bad: string[][] = [
      ['bogus'],
      [],
      ['ls', '--bogus'],
      ['ls', 'extra'],
      ['show'],
      ['send', 'w1'],
      ['resume'],
      ['resume', 'w1', '--keep'],
      ['logs', 'w1', '-n', '0'],
      ['supervise', 'maybe'],
      ['supervise', 'off', '--goal', 'x'],
      ['supervise', 'on', '--max-turns', 'many'],
      ['status', '--url'],
      ['status', '--url', 'ftp://example.com'],
      ['serve', '--no-such-setting', '1'],
    ];
    for (const args of bad) {
      const r = await cli(...args);
      expect({ args, code: r.code, out: r.out }).toEqual({ args, code: 2, out: '' });
      expect(r.err).toContain('usage: brainstem');
    }
    expect((await cli('ls', '--bogus')).err).toMatch(/^brainstem ls: Unknown option '--bogus'\nusage: brainstem ls \[--state <state>\] \[--json\] \[--url <service URL>\]/);
    // Asked for, the usage is no error
    expect(await cli('--help')).toMatchObject({ code: 0, out: expect.stringContaining('brainstem chat'), err: '' });
    expect(await cli('approve', '--help')).toMatchObject({ code: 0, out: expect.stringContaining('usage: brainstem approve <session> [--deny <reason>]') });
  });

  it('finds the service from the configuration and the token in the data directory; a wrong token is named; no service is exit 3', async () => {
    // Given a service that generated its token into its data directory
    const own = await startTestApp({ BRAINSTEM_API_TOKEN: '' }, { listen: true });
    try {
      const dataDir = own.config.journal.dir;
      const port = new URL(own.url).port;
      // When the CLI is given only the configuration (the data directory and the port)
      const configured = { BRAINSTEM_JOURNAL_DIR: dataDir, BRAINSTEM_PORT: port, BRAINSTEM_PROFILES_DIR: own.config.profiles.dir };
      const r = await brainstem(configured, 'status', '--json');
      // Then it reaches the service with that token
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ url: `http://127.0.0.1:${port}`, sessions: { total: 0 } });
      // And a token that is not the service's is refused, saying where it came from
      expect(await brainstem({ ...configured, BRAINSTEM_API_TOKEN: 'not-the-token' }, 'ls')).toMatchObject({
        code: 1,
        err: expect.stringMatching(/^brainstem ls: 401 unauthorized: .*\(the token came from BRAINSTEM_API_TOKEN\)/),
      });
    } finally {
      await own.close();
    }
    // And where nothing listens, it says so and exits 3
    const gone = await brainstem({ BRAINSTEM_URL: `http://127.0.0.1:${await closedPort()}` }, 'ls');
    expect(gone).toMatchObject({ code: 3, out: '', err: expect.stringMatching(/^brainstem ls: no Brainstem service answers at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): start it with `brainstem serve`/) });
  });

  it('as a process: exits with the documented codes (2 bad usage, 3 no service, 1 refused, 0 done)', async () => {
    const bin = resolve(__dirname, '../../bin/brainstem.js');
    const exitOf = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
      new Promise<number | null>((done) => spawn(process.execPath, [bin, ...args], { env: { PATH: path, HOME: work.path, ...extra }, stdio: 'ignore' }).once('exit', done));
    const port = await closedPort();
    expect(await Promise.all([exitOf(['bogus']), exitOf(['ls', '--bogus']), exitOf(['ls', '--url', `http://127.0.0.1:${port}`]), exitOf(['show', 'w99', '--url', t.url], env), exitOf(['ls', '--url', t.url], env)])).toEqual([
      2, 2, 3, 1, 0,
    ]);
  });
});
