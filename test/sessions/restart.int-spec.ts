import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CLAUDE_ARGS } from '../../src/sessions/runtimes/claude-code.runtime';
import { ServiceProcess, startService } from '../support/service-process';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WORKERS, WorkerReaper, isAlive } from '../support/workers';

type Status = { id: string; alias: string; state: string; pid: number | null; detached: boolean; exit_reason: string | null; runtime: string };

describe('coding sessions across a service restart (SIGKILL)', () => {
  const dir = tempDir('brainstem-restart-');
  const reaper = new WorkerReaper();
  const services: ServiceProcess[] = [];
  const env = { BRAINSTEM_JOURNAL_DIR: join(dir.path, 'journal'), PATH: `${FAKE_BIN}:${process.env.PATH}` };

  afterAll(async () => {
    for (const s of services) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    reaper.killAll();
    dir.remove();
  });

  async function boot(): Promise<ServiceProcess> {
    const svc = await startService(env);
    services.push(svc);
    return svc;
  }

  async function call(svc: ServiceProcess, method: string, path: string, body?: object): Promise<{ status: number; body: Status }> {
    const res = await fetch(`${svc.url}/api/v1/coding-sessions${path}`, {
      method,
      headers: body ? { ...svc.auth, 'content-type': 'application/json' } : svc.auth,
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Status };
  }

  it('keeps a live worker with its state and alias, marks a dead one lost_on_restart, resumes claude', async () => {
    const first = await boot();
    const quiet = { cwd: dir.path, command: process.execPath, args: [join(WORKERS, 'quiet.js')] };
    const alive = (await call(first, 'POST', '', quiet)).body;
    const doomed = (await call(first, 'POST', '', quiet)).body;
    const argvFile = join(dir.path, 'claude-argv.json');
    const readArgv = () => (existsSync(argvFile) ? (JSON.parse(readFileSync(argvFile, 'utf8')) as string[]) : []);
    const claude = (await call(first, 'POST', '', { cwd: dir.path, runtime: 'claude-code', prompt: 'hello', env: { FAKE_CLAUDE_ARGV_FILE: argvFile } })).body;
    const goneCwd = join(dir.path, 'removed-while-down');
    mkdirSync(goneCwd);
    const homeless = (await call(first, 'POST', '', { cwd: goneCwd, runtime: 'claude-code', prompt: 'hello' })).body;
    for (const s of [alive, doomed, claude, homeless]) reaper.track(s.pid);
    expect((await call(first, 'POST', `/${alive.id}/signals`, { type: 'ask_human', question: 'ship it?' })).body.state).toBe('pending_decision');
    for (const c of [claude, homeless]) {
      await waitFor(async () => (await call(first, 'GET', `/${c.id}`)).body.state === 'pending_handling', { what: 'claude to end its turn' });
    }
    const profileFlags = readArgv().slice(CLAUDE_ARGS.length);
    expect(profileFlags).toContain('--settings');

    first.child.kill('SIGKILL');
    await first.exited;
    process.kill(-doomed.pid!, 'SIGKILL');
    await waitFor(() => !isAlive(doomed.pid!), { what: 'the doomed worker to die' });
    expect(isAlive(alive.pid!)).toBe(true);
    rmSync(goneCwd, { recursive: true });

    const second = await boot();
    const kept = (await call(second, 'GET', `/${alive.alias}`)).body;
    expect(kept).toMatchObject({ id: alive.id, alias: alive.alias, state: 'pending_decision', pid: alive.pid, detached: true });
    const lost = (await call(second, 'GET', `/${doomed.id}`)).body;
    expect(lost).toMatchObject({ alias: doomed.alias, state: 'exited', exit_reason: 'lost_on_restart' });
    // Its resume cannot spawn: exited, and no recovery journaled for a process that never ran.
    expect((await call(second, 'GET', `/${homeless.id}`)).body).toMatchObject({ state: 'exited', exit_reason: 'spawn_failed' });
    const homelessEvents = (await (await fetch(`${second.url}/api/v1/journal/events?stream=session-${homeless.id}`, { headers: second.auth })).json()) as { events: { type: string }[] };
    expect(homelessEvents.events.map((e) => e.type).slice(-2)).toEqual(['session.exited', 'session.state_changed']);
    expect(homelessEvents.events.map((e) => e.type)).not.toContain('session.recovered');
    expect(isAlive(homeless.pid!)).toBe(false);
    const resumed = (await call(second, 'GET', `/${claude.id}`)).body;
    expect(resumed).toMatchObject({ alias: claude.alias, state: 'pending_handling', detached: false });
    expect(resumed.pid).not.toBe(claude.pid);
    reaper.track(resumed.pid);
    // The resumed claude runs with the profile flags the session started with (journaled), then --resume.
    const resumedArgv = await waitFor(() => readArgv().includes('--resume') && readArgv(), { what: 'the resumed claude argv' });
    expect(resumedArgv.slice(CLAUDE_ARGS.length, CLAUDE_ARGS.length + profileFlags.length)).toEqual(profileFlags);
    // Its env reached the resumed worker (the argv file is named by it), though the journal holds only the name.
    const claudeEvents = await (await fetch(`${second.url}/api/v1/journal/events?stream=session-${claude.id}`, { headers: second.auth })).text();
    expect(claudeEvents).not.toContain(argvFile);
    expect(claudeEvents).toContain('"env_keys":["FAKE_CLAUDE_ARGV_FILE"]');

    // The resumed claude takes instructions; the detached worker can only be signalled and stopped.
    expect((await call(second, 'POST', `/${claude.id}/messages`, { text: 'again' })).status).toBe(200);
    await waitFor(async () => (await call(second, 'GET', `/${claude.id}`)).body.state === 'pending_handling', { what: 'the resumed turn' });
    expect((await call(second, 'POST', `/${alive.id}/messages`, { text: 'hi' })).status).toBe(409);
    expect((await call(second, 'POST', `/${alive.id}/signals`, { type: 'turn_ended' })).body.state).toBe('pending_handling');
    const stopped = await call(second, 'POST', `/${alive.id}/stop`, { grace_ms: 2000 });
    expect(stopped.body).toMatchObject({ state: 'exited', exit_reason: 'stopped' });
    expect(isAlive(alive.pid!)).toBe(false);

    // Aliases are never reused.
    const next = (await call(second, 'POST', '', quiet)).body;
    reaper.track(next.pid);
    expect(next.alias).toBe(`w${Number(homeless.alias.slice(1)) + 1}`);
  });
  it('given stops still in their grace period when the service dies, then after the restart the sessions are exited as stopped and claude is not resumed', async () => {
    // The journal is shared with the test before: its last service lets go of it first.
    for (const s of services) s.child.kill('SIGKILL');
    await Promise.all(services.map((s) => s.exited));
    const first = await boot();
    const stubborn = (await call(first, 'POST', '', { cwd: dir.path, command: process.execPath, args: [join(WORKERS, 'stubborn.js')] })).body;
    const claude = (await call(first, 'POST', '', { cwd: dir.path, runtime: 'claude-code', prompt: 'hello', env: { FAKE_CLAUDE_IGNORE_SIGTERM: '1' } })).body;
    for (const s of [stubborn, claude]) reaper.track(s.pid);
    await waitFor(async () => (await call(first, 'GET', `/${claude.id}`)).body.state === 'pending_handling', { what: 'claude to end its turn' });
    const events = async (svc: ServiceProcess, id: string): Promise<string[]> => {
      const res = (await (await fetch(`${svc.url}/api/v1/journal/events?stream=session-${id}`, { headers: svc.auth })).json()) as { events: { type: string }[] };
      return res.events.map((e) => e.type);
    };
    for (const s of [stubborn, claude]) {
      // Answered only once the worker exits: the service dies first.
      void call(first, 'POST', `/${s.id}/stop`, { grace_ms: 600000 }).catch(() => undefined);
      await waitFor(async () => (await events(first, s.id)).includes('session.stop_requested'), { what: 'the stop to be journaled' });
    }

    first.child.kill('SIGKILL');
    await first.exited;
    // Gone already when its "SIGTERM ignored" hit the dead service's closed pipe (EPIPE): either way it must be dead.
    try {
      process.kill(-stubborn.pid!, 'SIGKILL');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
    }
    await waitFor(() => !isAlive(stubborn.pid!), { what: 'the stubborn worker to die' });

    const second = await boot();
    expect((await call(second, 'GET', `/${stubborn.id}`)).body).toMatchObject({ state: 'exited', exit_reason: 'stopped' });
    expect((await call(second, 'GET', `/${claude.id}`)).body).toMatchObject({ state: 'exited', exit_reason: 'stopped' });
    expect(await events(second, claude.id)).not.toContain('session.recovered');
    expect(isAlive(claude.pid!)).toBe(false);
  });
});
