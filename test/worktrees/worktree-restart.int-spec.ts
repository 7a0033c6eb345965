import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { GitRepo, gitRepo } from '../support/git-repo';
import { ServiceProcess, startService } from '../support/service-process';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('worktree sessions across a service restart (SIGKILL), real service and git', () => {
  const dir = tempDir('brainstem-wt-restart-');
  const reaper = new WorkerReaper();
  const services: ServiceProcess[] = [];
  let repo: GitRepo;
  const env = () => ({ BRAINSTEM_JOURNAL_DIR: join(dir.path, 'journal') });

  beforeAll(() => {
    repo = gitRepo({ 'shared.txt': 'one\n' });
  });
  afterAll(() => {
    for (const s of services) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    reaper.killAll();
    repo.remove();
    dir.remove();
  });

  const boot = async () => {
    const svc = await startService(env());
    services.push(svc);
    return svc;
  };
  const api = async (svc: ServiceProcess, method: string, path: string, body?: object): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`${svc.url}/api/v1${path}`, { method, headers: body ? { ...svc.auth, 'content-type': 'application/json' } : svc.auth, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const start = async (svc: ServiceProcess, title: string, step: object) => {
    const res = await api(svc, 'POST', '/coding-sessions', {
      title,
      runtime: 'command',
      command: process.execPath,
      args: [resolve(WORKERS, 'git-editor.js'), JSON.stringify(step)],
      cwd: repo.path,
      isolation: 'worktree',
    });
    expect(res.status).toBe(201);
    return res.body;
  };
  const status = async (svc: ServiceProcess, id: string) => (await api(svc, 'GET', `/coding-sessions/${id}`)).body;

  it('recovers every worktree session: its worktree, diff and merge; a live worker detached; a folder deleted while down reported missing and pruned', async () => {
    const first = await boot();
    const done = await start(first, 'Done', { write: { 'done.txt': 'done\n' }, commit: 'done', exit: 0 });
    const live = await start(first, 'Live', { write: { 'live.txt': 'live\n' }, commit: 'live' });
    const gone = await start(first, 'Gone', {});
    for (const s of [done, live, gone]) {
      const ready = await waitFor(async () => {
        const x = await status(first, s.id);
        return x.state !== 'starting' ? x : undefined;
      }, { what: `${s.alias} started` });
      reaper.track(ready.pid);
    }
    await waitFor(async () => (await status(first, done.id)).state === 'exited', { what: 'the done worker to exit' });
    await waitFor(async () => (await api(first, 'GET', `/coding-sessions/${live.id}/diff`)).body.ahead === 1, { what: 'the live worker to commit' });

    first.child.kill('SIGKILL');
    await first.exited;
    rmSync(gone.worktree.path, { recursive: true, force: true });
    expect(repo.git('worktree', 'list', '--porcelain')).toContain('prunable');

    const second = await boot();
    const recovered = await status(second, done.id);
    expect(recovered).toMatchObject({ state: 'exited', isolation: 'worktree', worktree: { path: done.worktree.path, branch: done.worktree.branch, base_sha: done.worktree.base_sha, state: 'ready' } });
    const diff = (await api(second, 'GET', `/coding-sessions/${done.id}/diff`)).body;
    expect(diff.files.map((f: Json) => f.path)).toEqual(['done.txt']);
    expect((await status(second, live.id))).toMatchObject({ detached: true, worktree: { state: 'ready' } });
    expect((await status(second, gone.id)).worktree.state).toBe('missing');
    expect(repo.git('worktree', 'list', '--porcelain')).not.toContain('prunable');

    const merged = await api(second, 'POST', `/coding-sessions/${done.id}/merge`, { strategy: 'ff' });
    expect(merged.status).toBe(200);
    expect(existsSync(join(repo.path, 'done.txt'))).toBe(true);
    second.child.kill('SIGTERM');
    await second.exited;
  });

  it('records a merge cut off by the kill, after git had finished it, as merged: the base holds the branch', async () => {
    const first = await boot();
    const s = await start(first, 'Cut', { write: { 'cut.txt': 'cut\n' }, commit: 'cut', exit: 0 });
    await waitFor(async () => (await status(first, s.id)).state === 'exited', { what: 'the worker to commit and exit' });
    first.child.kill('SIGKILL');
    await first.exited;
    // As the kill left it: the merge requested in the journal, and git done with it.
    const journal = await openLevelJournal(join(dir.path, 'journal'));
    try {
      const events = await journal.readStream(`session-${s.id}`);
      const at = Date.now();
      await journal.append(`session-${s.id}`, [{ type: 'session.worktree_op_requested', data: { at, op_id: 'op_cut', op: 'merge', strategy: 'ff', force: false } }], {
        expectedVersion: events.at(-1)!.version,
      });
    } finally {
      await journal.close();
    }
    repo.git('merge', '--ff-only', s.worktree.branch);
    const second = await boot();
    const recovered = await status(second, s.id);
    expect(recovered.worktree).toMatchObject({ pending_op: null, merged: { strategy: 'ff', into: 'main', commit: repo.git('rev-parse', 'main').trim() } });
    expect(recovered.worktree.last_op).toMatchObject({ op_id: 'op_cut', ok: true });
    second.child.kill('SIGTERM');
    await second.exited;
  });
});
