import { join } from 'node:path';
import { ServiceProcess, startService } from '../support/service-process';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper, isAlive } from '../support/workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('supervision across a service restart (SIGKILL)', () => {
  const reaper = new WorkerReaper();
  const services: ServiceProcess[] = [];
  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => (dir = tempDir('brainstem-sup-restart-')));
  afterEach(async () => {
    for (const s of services.splice(0)) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    reaper.killAll();
    dir.remove();
  });

  const boot = async (env: Record<string, string> = {}) => {
    const svc = await startService({ BRAINSTEM_JOURNAL_DIR: join(dir.path, 'journal'), BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '100', ...env });
    services.push(svc);
    return svc;
  };
  const call = async (svc: ServiceProcess, method: string, path: string, body?: object): Promise<Json> => {
    const res = await fetch(`${svc.url}/api/v1${path}`, {
      method,
      headers: body ? { ...svc.auth, 'content-type': 'application/json' } : svc.auth,
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await res.json()) as Json;
  };
  const kill = async (svc: ServiceProcess) => {
    svc.child.kill('SIGKILL');
    await svc.exited;
  };
  const startWorker = async (svc: ServiceProcess) => {
    const s = await call(svc, 'POST', '/coding-sessions', { cwd: dir.path, command: process.execPath, args: [join(WORKERS, 'quiet.js')] });
    reaper.track(s.pid);
    return s;
  };
  const rounds = async (svc: ServiceProcess) => (await call(svc, 'GET', '/session-os/main-brain/rounds')).rounds as Json[];
  const autonomous = async (svc: ServiceProcess) => (await call(svc, 'GET', '/session-os/main-brain/autonomous')).autonomous as Json;
  const notices = async (svc: ServiceProcess) =>
    ((await call(svc, 'GET', '/session-os/main-brain/messages')).messages as Json[]).filter((m) => m.kind === 'notice').map((m) => m.text as string);
  // The notice is posted just after supervision is closed: wait for it rather than read the chat at once.
  const firstNotices = (svc: ServiceProcess) => waitFor(async () => ((await notices(svc)).length > 0 ? notices(svc) : undefined), { what: 'the restore notice' });

  it('within the TTL and with a live worker, restores supervision with the same turns_used, and the in-flight round wakes the next', async () => {
    const first = await boot();
    const w = await startWorker(first);
    await call(first, 'POST', '/session-os/main-brain/autonomous', { enabled: true, task_hint: 'keep shipping', max_turns: 10 });
    await call(first, 'POST', `/coding-sessions/${w.id}/signals`, { type: 'notify_blocked', reason: 'first' });
    const [r1] = await waitFor(async () => ((await rounds(first)).length === 1 ? rounds(first) : undefined), { what: 'round 1' });
    await call(first, 'POST', `/session-os/main-brain/rounds/${r1.id}/complete`, {});
    await call(first, 'POST', `/coding-sessions/${w.id}/signals`, { type: 'ask_human', question: 'deploy now?' });
    const [r2] = await waitFor(async () => ((await rounds(first)).length === 2 ? rounds(first) : undefined), { what: 'round 2 in flight' });
    expect(r2.status).toBe('in_flight');
    await kill(first);
    expect(isAlive(w.pid)).toBe(true);

    const second = await boot();
    const after = await waitFor(async () => ((await rounds(second)).length === 3 ? rounds(second) : undefined), { what: 'the round after restore' });
    expect(after[1]).toMatchObject({ id: r2.id, status: 'interrupted' });
    expect(after[0].reasons.map((r: Json) => [r.session_id, r.message])).toEqual([[w.id, 'deploy now?']]);
    expect(await autonomous(second)).toMatchObject({ enabled: true, task_hint: 'keep shipping', max_turns: 10, started_by: 'user', turns_used: 3 });
  });

  it('with BRAINSTEM_SUPERVISION_RESTORE_TTL_S=1 and a 2 s wait, does not restore', async () => {
    const env = { BRAINSTEM_SUPERVISION_RESTORE_TTL_S: '1' };
    const first = await boot(env);
    await startWorker(first);
    await call(first, 'POST', '/session-os/main-brain/autonomous', { enabled: true });
    await kill(first);
    const killedAt = Date.now();
    // The scenario itself is "2 s later": wait until that much time has passed.
    await waitFor(() => Date.now() - killedAt >= 2000, { what: '2 s to pass', intervalMs: 100 });
    const second = await boot(env);
    expect(await autonomous(second)).toMatchObject({ enabled: false, closed_reason: 'restore_expired' });
    expect(await firstNotices(second)).toEqual([expect.stringMatching(/^Supervision was not restored after the restart: its snapshot was older/)]);
  });

  it('with the worker killed while the service is down, does not restore', async () => {
    const first = await boot();
    const w = await startWorker(first);
    await call(first, 'POST', '/session-os/main-brain/autonomous', { enabled: true });
    await kill(first);
    process.kill(-w.pid, 'SIGKILL');
    await waitFor(() => !isAlive(w.pid), { what: 'the worker to die' });
    const second = await boot();
    expect(await autonomous(second)).toMatchObject({ enabled: false, closed_reason: 'no_recoverable_worker' });
    expect(await firstNotices(second)).toEqual(['Supervision was not restored after the restart: no supervised worker survived.']);
  });

  it('does not wake the brain again at restart for a question a completed round covered; what changed since does', async () => {
    const first = await boot();
    const [w1, w2] = [await startWorker(first), await startWorker(first)];
    await call(first, 'POST', '/session-os/main-brain/autonomous', { enabled: true });
    await call(first, 'POST', `/coding-sessions/${w1.id}/signals`, { type: 'ask_human', question: 'sqlite or postgres?' });
    const [r1] = await waitFor(async () => ((await rounds(first)).length === 1 ? rounds(first) : undefined), { what: 'round 1' });
    await call(first, 'POST', `/session-os/main-brain/rounds/${r1.id}/complete`, { summary: 'asked the user' });
    await kill(first);

    const second = await boot();
    expect(await autonomous(second)).toMatchObject({ enabled: true, round_in_flight: null, pending: [] });
    // Something new: w2's turn ends. Had the restart woken the brain for w1's question again, that round would be first.
    await call(second, 'POST', `/coding-sessions/${w2.id}/signals`, { type: 'turn_ended', result: 'w2 done' });
    const after = await waitFor(async () => ((await rounds(second)).length >= 2 ? rounds(second) : undefined), { what: 'the round after restore' });
    expect(after.map((r) => [r.status, r.reasons.map((x: Json) => [x.session_id, x.trigger])])).toEqual([
      ['in_flight', [[w2.id, 'pending_handling']]],
      ['completed', [[w1.id, 'ask_human']]],
    ]);
  });
});
