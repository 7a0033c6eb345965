import { join } from 'node:path';
import { EventJournal } from '../../src/journal/event-journal';
import { RuntimeCatalog } from '../../src/sessions/runtimes/runtime-catalog';
import { InertRuntime } from '../support/inert-runtime';
import { ServiceProcess, startService } from '../support/service-process';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper, isAlive } from '../support/workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Retention and boot over one real LevelDB journal, the tests in order: things leave memory while the service runs;
 * a restart after a clean shutdown starts from the snapshots and rebuilds only what is in memory; a restart after a
 * SIGKILL replays the tail written after the snapshots.
 */
describe('bounded memory: retention, paged lists and boot from snapshots', () => {
  const dir = tempDir('brainstem-retention-');
  const journalDir = () => join(dir.path, 'journal');
  const env = () => ({ BRAINSTEM_JOURNAL_DIR: journalDir(), BRAINSTEM_RETENTION_S: '1' });
  const reaper = new WorkerReaper();
  const services: ServiceProcess[] = [];
  let t: TestApp | null = null;
  /** What the first service did, for the ones after it. */
  const seen: { keeper?: Json; gone?: Json; held?: Json; late?: Json; lateExitedAt?: number; round?: Json; converged?: Json } = {};

  afterAll(async () => {
    await t?.close();
    for (const s of services) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    reaper.killAll();
    dir.remove();
  });

  const boot = async (): Promise<TestApp> => {
    // A test before that failed may have left its service open on the journal.
    await t?.close();
    const app = await startTestApp(env());
    app.app.get(RuntimeCatalog).register(new InertRuntime());
    return app;
  };
  const req = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await t!.inject({ method, url: `/api/v1${url}`, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json() as Json };
  };
  // Excluded from supervision: their exits wake no check round, so the only round is the one the test ends.
  const create = async (title: string) => (await req('POST', '/coding-sessions', { runtime: 'inert', cwd: dir.path, title, excluded: true })).body;
  const stop = async (s: Json) => expect((await req('POST', `/coding-sessions/${s.id}/stop`, {})).body.state).toBe('exited');
  const gone = (url: string) =>
    waitFor(
      async () => {
        const res = await req('GET', url);
        return res.status === 404 && res.body;
      },
      { what: `${url} to leave memory` },
    );

  it('given things that ended, when their retention passes, then they leave memory, lists and GETs (404 saying so), but not what a running run holds', async () => {
    t = await boot();
    const keeper = await create('keeper');
    const held = await create('held');
    const goneSession = await create('gone');
    const pipeline = (await req('POST', '/workflow-runs', { workflow_id: 'pipeline', auto_supervise: false, session_ids: [held.alias] })).body;
    const converged = (await req('POST', '/workflow-runs', { workflow_id: 'done', auto_supervise: false })).body;
    expect((await req('POST', `/workflow-runs/${converged.id}/converge`)).status).toBe(200);
    await req('POST', '/session-os/main-brain/messages', { text: '/supervise keep going' });
    const round = await waitFor(async () => (await req('GET', '/session-os/main-brain/rounds')).body.rounds[0], { what: 'the round' });
    expect((await req('POST', `/session-os/main-brain/rounds/${round.id}/complete`, { summary: 'done' })).status).toBe(200);
    // held first: when gone has left, held's retention has run out too, and it was found held.
    await stop(held);
    await stop(goneSession);

    const byId = await gone(`/coding-sessions/${goneSession.id}`);
    expect(byId).toMatchObject({ code: 'not_found', message: expect.stringContaining('exited sessions leave memory 1 s after they exit (BRAINSTEM_RETENTION_S); the journal keeps their events') });
    expect((await req('GET', `/coding-sessions/${goneSession.alias}`)).body.message).toContain(`coding session ${goneSession.alias} is no longer in memory`);
    expect((await req('GET', `/coding-sessions/${held.id}`)).body).toMatchObject({ id: held.id, state: 'exited' });
    expect((await gone(`/workflow-runs/${converged.id}`)).message).toContain('converged runs leave memory 1 s after they converge');
    expect((await gone(`/session-os/main-brain/rounds/${round.id}`)).message).toContain('ended rounds leave memory 1 s after they end');
    expect((await req('GET', '/session-os/main-brain/rounds')).body).toEqual({ rounds: [], next_cursor: null });
    expect((await req('GET', '/workflow-runs')).body).toEqual({ runs: [expect.objectContaining({ id: pipeline.id })], next_cursor: null });
    // The journal keeps what left memory.
    const history = (await req('GET', `/journal/events?stream=session-${goneSession.id}`)).body.events as Json[];
    expect(history.map((e) => e.type)).toContain('session.exited');

    // Paged, in creation order; a cursor is refused by another list, and bad values are named.
    const first = (await req('GET', '/coding-sessions?limit=1')).body;
    expect(first.sessions.map((s: Json) => s.id)).toEqual([keeper.id]);
    const second = (await req('GET', `/coding-sessions?limit=1&cursor=${first.next_cursor}`)).body;
    expect(second).toEqual({ sessions: [expect.objectContaining({ id: held.id })], next_cursor: null });
    const refused: Array<[string, RegExp]> = [
      ['/coding-sessions?cursor=bogus', /^cursor: not a cursor of this list/],
      [`/session-os/main-brain/rounds?cursor=${first.next_cursor}`, /^cursor: not a cursor of this list/],
      ['/workflow-runs?cursor=a%2Fb', /^cursor: /],
      ['/coding-sessions?limit=0', /^limit: /],
      ['/session-os/main-brain/rounds?limit=1001', /^limit: /],
      ['/workflow-runs?limit=ten', /^limit: /],
    ];
    for (const [url, message] of refused) {
      const res = await req('GET', url);
      expect([url, res.status, res.body.message]).toEqual([url, 400, expect.stringMatching(message)]);
    }
    // The main brain's list: live sessions first.
    const listed = (await req('POST', '/session-os/main-brain/tools/list_sessions', { limit: 1 })).body.result;
    expect(listed).toEqual({ sessions: [expect.objectContaining({ id: keeper.id })], omitted: 1 });

    // Once the run converges, it holds the session no more.
    await req('POST', `/workflow-runs/${pipeline.id}/converge`);
    await gone(`/coding-sessions/${held.id}`);

    // Ended just before the shutdown: still in memory, and in the index the shutdown writes, with its exit time.
    const late = await create('late');
    await stop(late);
    Object.assign(seen, { keeper, gone: goneSession, held, late, lateExitedAt: Date.now(), round, converged });
    expect((await req('GET', `/coding-sessions/${late.id}`)).status).toBe(200);
    await t.close();
    t = null;
  });

  it('given a clean shutdown, when the service restarts after the retention, then boot reads the snapshots and their tails and rebuilds only what is in memory', async () => {
    const { keeper, gone: goneSession, held, late, lateExitedAt, round, converged } = seen as Required<typeof seen>;
    // The late session's retention runs out while the service is down.
    await waitFor(() => Date.now() > lateExitedAt + 1000, { what: 'the retention of the late session to pass' });
    // Spies on the real journal: they count what boot reads, and pass every call through.
    const reads = jest.spyOn(EventJournal.prototype, 'readStream');
    const snapshots = jest.spyOn(EventJournal.prototype, 'loadSnapshot');
    let calls: Array<Parameters<EventJournal['readStream']>>;
    let results: Array<Promise<{ stream: string; version: number } | null>>;
    try {
      t = await boot();
    } finally {
      calls = [...reads.mock.calls];
      results = snapshots.mock.results.map((r) => r.value);
      reads.mockRestore();
      snapshots.mockRestore();
    }
    const readFrom = new Map(calls.map(([stream, from]) => [stream, from ?? 1]));
    for (const s of [goneSession, held, late]) expect(readFrom.has(`session-${s.id}`)).toBe(false);
    expect(readFrom.has(`session-${keeper.id}`)).toBe(true);
    expect(readFrom.has(`workflow-${converged.id}`)).toBe(false);
    const loaded = await Promise.all(results);
    for (const stream of ['sessions', 'supervision', 'workflows']) {
      const snap = loaded.find((s) => s?.stream === stream);
      expect([stream, snap?.version]).toEqual([stream, expect.any(Number)]);
      // Only the tail after the snapshot is read.
      expect([stream, readFrom.get(stream)]).toEqual([stream, (snap?.version ?? 0) + 1]);
    }

    expect((await req('GET', `/coding-sessions/${late.id}`)).status).toBe(404);
    expect((await req('GET', '/coding-sessions')).body.sessions.map((s: Json) => s.id)).toEqual([keeper.id]);
    expect((await req('GET', `/session-os/main-brain/rounds/${round.id}`)).status).toBe(404);
    // The alias count came from the index: aliases are never reused.
    const next = await create('next');
    expect(next.alias).toBe(`w${Number(late.alias.slice(1)) + 1}`);
    await t.close();
    t = null;
  });

  it('given a service killed after the snapshots, when it restarts, then what it did after them is replayed from the tail', async () => {
    await t?.close();
    t = null;
    const call = async (svc: ServiceProcess, method: string, path: string, body?: object) => {
      const res = await fetch(`${svc.url}/api/v1${path}`, { method, headers: body ? { ...svc.auth, 'content-type': 'application/json' } : svc.auth, body: body ? JSON.stringify(body) : undefined });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const first = await startService(env());
    services.push(first);
    const worker = (await call(first, 'POST', '/coding-sessions', { cwd: dir.path, command: process.execPath, args: [join(WORKERS, 'quiet.js')] })).body;
    reaper.track(worker.pid);
    await call(first, 'POST', '/session-os/main-brain/messages', { text: '/supervise after the snapshot' });
    const round = await waitFor(async () => (await call(first, 'GET', '/session-os/main-brain/rounds')).body.rounds[0], { what: 'the round' });
    first.child.kill('SIGKILL');
    await first.exited;
    expect(isAlive(worker.pid)).toBe(true);

    const second = await startService(env());
    services.push(second);
    expect((await call(second, 'GET', `/coding-sessions/${worker.alias}`)).body).toMatchObject({ id: worker.id, state: 'working', detached: true });
    // The round in flight when the service died is in the tail: interrupted, and supervision restored with its turn.
    expect((await call(second, 'GET', `/session-os/main-brain/rounds/${round.id}`)).body).toMatchObject({ status: 'interrupted' });
    expect((await call(second, 'GET', '/session-os/main-brain/autonomous')).body.autonomous).toMatchObject({ enabled: true, task_hint: 'after the snapshot' });
    expect((await call(second, 'GET', `/coding-sessions/${seen.gone!.id}`)).status).toBe(404);
    second.child.kill('SIGKILL');
    await second.exited;
  });
});
