import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { GitRepo, gitRepo } from '../support/git-repo';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const EDITOR = resolve(WORKERS, 'git-editor.js');

describe('sessions in worktrees of their own, over HTTP, with the real git CLI', () => {
  const reaper = new WorkerReaper();
  const t = useTestApp({ BRAINSTEM_RETENTION_S: '1' }, { beforeClose: () => reaper.killAll() });
  let repo: GitRepo;
  beforeEach(() => {
    repo = gitRepo({ 'shared.txt': 'one\ntwo\nthree\n', 'README.md': 'hello\n' });
  });
  afterEach(async () => {
    // Workers started in the background (while their worktree was prepared) are found by the sessions list.
    for (const s of (await t.inject({ method: 'GET', url: '/api/v1/coding-sessions' })).json().sessions as Json[]) reaper.track(s.pid);
    reaper.killAll();
    repo.remove();
  });

  const api = async (method: 'GET' | 'POST', url: string, payload?: object): Promise<{ status: number; body: Json }> => {
    const res = await t.inject({ method, url: `/api/v1${url}`, payload });
    return { status: res.statusCode, body: res.json() };
  };
  /** A worker that makes `step` (write files, commit) in its worktree, then waits for more on stdin. */
  const start = async (title: string, step: object, over: object = {}) => {
    const res = await api('POST', '/coding-sessions', { title, runtime: 'command', command: process.execPath, args: [EDITOR, JSON.stringify(step)], cwd: repo.path, isolation: 'worktree', ...over });
    expect(res.status).toBe(201);
    return res.body;
  };
  const statusOf = async (id: string) => (await api('GET', `/coding-sessions/${id}`)).body;
  const until = (id: string, what: string, test: (s: Json) => boolean) =>
    waitFor(
      async () => {
        const s = await statusOf(id);
        return test(s) ? s : undefined;
      },
      { what: `${id}: ${what}` },
    );
  const running = async (id: string) => {
    const s = await until(id, 'its worker running', (x) => x.state === 'working' || x.state === 'exited');
    reaper.track(s.pid);
    return s;
  };
  const committed = (id: string, n = 1) => waitFor(async () => ((await api('GET', `/coding-sessions/${id}/diff`)).body.ahead >= n ? true : undefined), { what: `${id}: ${n} commit(s)` });
  const stop = (id: string) => api('POST', `/coding-sessions/${id}/stop`, { grace_ms: 2000 });

  it('given two sessions editing one file differently, then each works on its own branch and diff; the first fast-forwards, the second is a 409 naming the file and the main checkout stays clean', async () => {
    const a = await start('Edit A', { write: { 'shared.txt': 'one\nTWO by a\nthree\n' }, commit: 'a edits shared' });
    const b = await start('Edit B', { write: { 'shared.txt': 'one\nTWO by b\nthree\n' }, commit: 'b edits shared' });
    expect(a).toMatchObject({ isolation: 'worktree', worktree: { branch: `brainstem/${a.alias}-edit-a`, base_ref: 'main', base_branch: 'main', repo: repo.path } });
    expect(b.worktree.branch).toBe(`brainstem/${b.alias}-edit-b`);
    expect(a.cwd).toBe(a.worktree.path);
    expect(a.cwd).not.toBe(b.cwd);
    await running(a.id);
    await running(b.id);
    await committed(a.id);
    await committed(b.id);

    const da = (await api('GET', `/coding-sessions/${a.id}/diff`)).body;
    expect(da).toMatchObject({ id: a.id, alias: a.alias, branch: a.worktree.branch, ahead: 1, behind: 0, files_total: 1, next_cursor: null });
    expect(da.files).toEqual([{ path: 'shared.txt', old_path: null, change: 'modified', additions: 1, deletions: 1, binary: false, uncommitted: false }]);
    expect(da.commits.map((c: Json) => c.subject)).toEqual(['a edits shared']);
    const changed = (d: Json) => d.patches[0].lines.filter((l: Json) => l.kind === 'add' || l.kind === 'del').map((l: Json) => `${l.kind} ${l.text}`);
    expect(changed(da)).toEqual(['del two', 'add TWO by a']);
    expect(changed((await api('GET', `/coding-sessions/${b.id}/diff`)).body)).toEqual(['del two', 'add TWO by b']);
    // The main checkout saw none of it.
    expect(repo.read('shared.txt')).toBe('one\ntwo\nthree\n');

    // Uncommitted changes in the main checkout to a file the merge would change: refused, naming it, nothing touched.
    repo.write('shared.txt', 'my own edit\n');
    const dirty = await api('POST', `/coding-sessions/${a.id}/merge`, { strategy: 'ff' });
    expect(dirty).toMatchObject({ status: 409, body: { code: 'main_checkout_dirty', details: { files: ['shared.txt'] } } });
    expect(repo.read('shared.txt')).toBe('my own edit\n');
    repo.git('checkout', '--', 'shared.txt');

    const merged = await api('POST', `/coding-sessions/${a.id}/merge`, { strategy: 'ff' });
    expect(merged.status).toBe(200);
    expect(merged.body.worktree).toMatchObject({ merged: { strategy: 'ff', into: 'main' }, last_op: { op: 'merge', ok: true }, pending_op: null });
    expect(repo.read('shared.txt')).toBe('one\nTWO by a\nthree\n');

    const head = repo.git('rev-parse', 'HEAD');
    const conflict = await api('POST', `/coding-sessions/${b.id}/merge`, { strategy: 'merge' });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ code: 'merge_conflict', details: { files: ['shared.txt'] } });
    expect((await api('POST', `/coding-sessions/${b.id}/merge`, { strategy: 'ff' })).body.code).toBe('not_fast_forward');
    expect((await api('POST', `/coding-sessions/${b.id}/merge`, { strategy: 'rebase' })).body).toMatchObject({ code: 'merge_conflict', details: { files: ['shared.txt'] } });
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(repo.mergeHead()).toBe(false);
    expect((await statusOf(b.id)).worktree.last_op).toMatchObject({ op: 'merge', ok: false, code: 'merge_conflict' });
    // Journaled: the requests and their outcomes; the ff, refused from the refs before anything was tried, is not requested.
    const events = (await api('GET', `/journal/events?stream=session-${b.id}&limit=100`)).body.events.map((e: Json) => e.type);
    expect(events.filter((e: string) => e.startsWith('session.worktree_'))).toEqual([
      'session.worktree_created',
      'session.worktree_prepared',
      'session.worktree_op_requested',
      'session.worktree_op_failed',
      'session.worktree_op_requested',
      'session.worktree_op_failed',
    ]);
    const ofA = (await api('GET', `/journal/events?stream=session-${a.id}&limit=100`)).body.events.map((e: Json) => e.type) as string[];
    expect(ofA.filter((e) => e.startsWith('session.worktree_op') || e === 'session.worktree_merged')).toEqual([
      'session.worktree_op_requested',
      'session.worktree_op_failed',
      'session.worktree_op_requested',
      'session.worktree_merged',
    ]);
  });

  it('given a setup command that fails, then the session fails with the reason, and what it printed is in its output', async () => {
    await api('POST', '/agent-profiles', { name: 'Broken setup', isolation: 'worktree', worktree: { setup: 'echo installing; exit 3' } });
    const id = ((await api('GET', '/agent-profiles')).body.profiles as Json[]).find((p) => p.name === 'Broken setup')?.id;
    const s = await start('Setup fails', {}, { profile_id: id, isolation: undefined });
    expect(s.worktree).toMatchObject({ setup: 'echo installing; exit 3' });
    const failed = await until(s.id, 'exited', (x) => x.state === 'exited');
    expect(failed).toMatchObject({ exit_reason: 'setup_failed', pid: null, worktree: { state: 'failed', prepare_failure: 'the setup command "echo installing; exit 3" exited with code 3' } });
    const output = (await api('GET', `/coding-sessions/${s.id}/output`)).body.lines;
    expect(output).toEqual(expect.arrayContaining(['installing', 'brainstem: the setup command "echo installing; exit 3" exited with code 3']));
  });

  it('given a setup command and files to copy, then the worker starts once both are done, with the copies in its worktree', async () => {
    repo.write('.env', 'KEY=1\n');
    await api('POST', '/agent-profiles', { name: 'Good setup', isolation: 'worktree', worktree: { setup: 'echo "$BRAINSTEM_SESSION_ID" > setup-ran.txt', copy: ['.env'] } });
    const id = ((await api('GET', '/agent-profiles')).body.profiles as Json[]).find((p) => p.name === 'Good setup')?.id;
    const s = await start('With setup', {}, { profile_id: id, isolation: undefined });
    await running(s.id);
    expect(repo.read('.env', s.worktree.path)).toBe('KEY=1\n');
    expect(repo.read('setup-ran.txt', s.worktree.path).trim()).toBe(s.id);
    const d = (await api('GET', `/coding-sessions/${s.id}/diff`)).body;
    expect(d.files.map((f: Json) => [f.path, f.uncommitted])).toEqual([
      ['.env', true],
      ['setup-ran.txt', true],
    ]);
  });

  it('keeps a branch of a taken name apart by a number, and reuses an existing branch by name', async () => {
    const s = await start('Numbered', {});
    // Aliases are numbered in order: the next session's branch name is taken before it starts.
    repo.git('branch', `brainstem/w${Number(s.alias.slice(1)) + 1}-numbered`);
    const next = await start('Numbered', {});
    expect(next.worktree.branch).toBe(`brainstem/${next.alias}-numbered-2`);
    repo.git('branch', 'feature/mine');
    const reused = await start('Reuse', {}, { branch: 'feature/mine' });
    expect(reused.worktree).toMatchObject({ branch: 'feature/mine', reused: 'branch' });
  });

  it('given a live session, then discard is refused; stopped with uncommitted work, then discard is a 409 naming the files until forced; branch-only keeps the branch', async () => {
    const s = await start('Discard me', { write: { 'draft.txt': 'unsaved\n' } });
    await running(s.id);
    await waitFor(() => existsSync(`${s.worktree.path}/draft.txt`), { what: 'the draft written' });
    expect((await api('POST', `/coding-sessions/${s.id}/discard`, {})).body).toMatchObject({ code: 'session_live' });
    await stop(s.id);
    const dirty = await api('POST', `/coding-sessions/${s.id}/discard`, {});
    expect(dirty.status).toBe(409);
    expect(dirty.body).toMatchObject({ code: 'worktree_dirty', details: { files: ['draft.txt'] } });
    expect(existsSync(`${s.worktree.path}/draft.txt`)).toBe(true);
    const gone = await api('POST', `/coding-sessions/${s.id}/discard`, { force: true });
    expect(gone.body.worktree).toMatchObject({ state: 'removed', removed: { reason: 'discarded', branch_kept: false } });
    expect(existsSync(s.worktree.path)).toBe(false);
    expect(repo.git('branch', '--list', s.worktree.branch)).toBe('');

    const k = await start('Keep me', { write: { 'k.txt': 'k\n' } });
    await running(k.id);
    await api('POST', `/coding-sessions/${k.id}/messages`, { text: JSON.stringify({ commit: 'keep it' }) });
    await committed(k.id);
    await stop(k.id);
    const kept = await api('POST', `/coding-sessions/${k.id}/branch-only`, {});
    expect(kept.body.worktree).toMatchObject({ state: 'removed', removed: { reason: 'branch_only', branch_kept: true } });
    expect(repo.git('branch', '--list', k.worktree.branch).trim()).toBe(k.worktree.branch);
    expect((await api('GET', `/coding-sessions/${k.id}/diff`)).body.code).toBe('worktree_removed');
  });

  it('given a merged session that exited, then cleanup removes its worktree after retention, but never one with uncommitted changes', async () => {
    const clean = await start('Clean', { write: { 'c.txt': 'c\n' }, commit: 'c' });
    const messy = await start('Messy', { write: { 'm.txt': 'm\n' }, commit: 'm' });
    for (const s of [clean, messy]) {
      await running(s.id);
      await committed(s.id);
    }
    expect((await api('POST', `/coding-sessions/${clean.id}/merge`, { strategy: 'merge' })).status).toBe(200);
    expect((await api('POST', `/coding-sessions/${messy.id}/merge`, { strategy: 'merge' })).status).toBe(200);
    await api('POST', `/coding-sessions/${messy.id}/messages`, { text: JSON.stringify({ write: { 'after-merge.txt': 'not committed\n' } }) });
    await waitFor(() => existsSync(`${messy.worktree.path}/after-merge.txt`), { what: 'the late edit' });
    await stop(clean.id);
    await stop(messy.id);
    const removed = await until(clean.id, 'its worktree removed', (x) => x.worktree.state === 'removed');
    expect(removed.worktree.removed).toMatchObject({ reason: 'cleanup', branch_kept: false });
    expect(existsSync(clean.worktree.path)).toBe(false);
    const blocked = await until(messy.id, 'its cleanup blocked', (x) => x.worktree.cleanup_blocked !== null);
    expect(blocked.worktree).toMatchObject({ state: 'ready', cleanup_blocked: ['after-merge.txt'] });
    expect(repo.read('after-merge.txt', messy.worktree.path)).toBe('not committed\n');
  });

  it('given a worktree folder deleted by hand, then its diff says so (409), its status shows it missing, and the service goes on', async () => {
    const s = await start('Deleted', {});
    await running(s.id);
    await stop(s.id);
    repo.git('worktree', 'remove', '--force', s.worktree.path);
    const d = await api('GET', `/coding-sessions/${s.id}/diff`);
    expect(d.status).toBe(409);
    expect(d.body).toMatchObject({ code: 'worktree_missing', details: { path: s.worktree.path, branch: s.worktree.branch } });
    expect((await statusOf(s.id)).worktree.state).toBe('missing');
    expect((await api('POST', `/coding-sessions/${s.id}/branch-only`, {})).body.worktree).toMatchObject({ state: 'removed', removed: { branch_kept: true } });
  });

  it('given two live sessions in one checkout without worktrees, then both carry a warning naming the other; an isolated one does not', async () => {
    const plain = (title: string) => api('POST', '/coding-sessions', { title, runtime: 'command', command: process.execPath, args: [EDITOR], cwd: repo.path });
    const one = (await plain('one')).body;
    const two = (await plain('two')).body;
    const iso = await start('isolated', {});
    for (const s of [one, two, iso]) reaper.track((await running(s.id)).pid);
    const [s1, s2, s3] = await Promise.all([one, two, iso].map((s) => statusOf(s.id)));
    expect(s1).toMatchObject({ isolation: 'none', work_tree: repo.path, warnings: [{ code: 'shared_work_tree', sessions: [two.alias], work_tree: repo.path }] });
    expect(s2.warnings[0].sessions).toEqual([one.alias]);
    expect(s3.warnings).toEqual([]);
    const listed = (await api('GET', '/coding-sessions')).body.sessions as Json[];
    expect(listed.find((s) => s.id === one.id)?.warnings).toHaveLength(1);
    // The brain is told in its round's prompt.
    await api('POST', '/session-os/main-brain/messages', { text: '/supervise keep them apart' });
    const round = await waitFor(async () => ((await api('GET', '/session-os/main-brain/rounds')).body.rounds as Json[])[0], { what: 'a round' });
    expect(round.prompt).toContain(`Parallel-safety warning`);
    expect(round.prompt).toContain(`  - ${one.alias}, ${two.alias} in ${JSON.stringify(repo.path)}`);
    await api('POST', '/session-os/main-brain/autonomous', { enabled: false });
    await stop(two.id);
    expect((await statusOf(one.id)).warnings).toEqual([]);
  });
});
