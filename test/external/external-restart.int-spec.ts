import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { TestApp, startTestApp } from '../support/test-app';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';

/** External sessions across a restart of the service: their claude is watched again, never resumed or restarted by it. */
describe('external claude sessions across a service restart', () => {
  const dir = tempDir('brainstem-external-restart-');
  const processes: ChildProcess[] = [];
  let app: TestApp | null = null;
  afterAll(async () => {
    await app?.close();
    for (const p of processes) p.kill('SIGKILL');
    dir.remove();
  });

  const boot = () => startTestApp({ BRAINSTEM_JOURNAL_DIR: join(dir.path, 'journal') });
  const claudeProcess = (): ChildProcess => {
    const p = spawn('sleep', ['120']);
    processes.push(p);
    return p;
  };
  /** A claude session's SessionStart, as its hook reports it (the user may call the hook routes too). */
  const start = async (t: TestApp, pid: number): Promise<string> => {
    const event = { session_id: randomUUID(), transcript_path: null, cwd: '/repo', hook_event_name: 'SessionStart', source: 'startup' };
    const res = await t.inject({ method: 'POST', url: '/api/v1/external/claude/events/SessionStart', payload: { event, claude_pid: pid } });
    expect(res.statusCode).toBe(200);
    return res.json().session.id;
  };
  const status = async (t: TestApp, id: string) => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json();

  it('Given two external sessions when the service stops, When it starts again, Then the one whose claude still runs is live and watched, the other exited (vanished)', async () => {
    const first = await boot();
    app = first;
    const alive = claudeProcess();
    const gone = claudeProcess();
    const keeps = await start(first, alive.pid as number);
    const ends = await start(first, gone.pid as number);
    await first.close();
    app = null;
    gone.kill('SIGKILL');
    await waitFor(() => gone.exitCode !== null || gone.signalCode !== null, { what: 'the second claude to end' });

    const second = await boot();
    app = second;
    expect(await status(second, ends)).toMatchObject({ state: 'exited', exit_reason: 'vanished' });
    // Live as it was: not resumed (no claude --resume), not detached; it takes a message only through a waiting hook
    expect(await status(second, keeps)).toMatchObject({ state: 'working', pid: alive.pid, detached: false, origin: 'external' });
    const msg = await second.inject({ method: 'POST', url: `/api/v1/coding-sessions/${keeps}/messages`, payload: { text: 'hi' } });
    expect(msg.json()).toMatchObject({ code: 'hook_not_waiting' });

    alive.kill('SIGKILL');
    await waitFor(async () => (await status(second, keeps)).state === 'exited', { timeoutMs: 20000, what: 'the watched claude seen gone' });
    expect((await status(second, keeps)).exit_reason).toBe('vanished');
  });
});
