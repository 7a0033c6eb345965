import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { GitRepo, gitRepo } from '../support/git-repo';
import { PgCluster, PgDatabase, pgDescribe, startPgCluster } from '../support/pg-cluster';
import { ServiceProcess, startService } from '../support/service-process';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

const describePg = pgDescribe('worktree-diff.int-spec');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const LONG = { timeoutMs: 60000 };

const numbered = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}\n`).join('');

describePg("a session's diff read through a node that does not own it (two real nodes on one PostgreSQL journal)", () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  let repo: GitRepo;
  let id: string;
  const dirs = { a: tempDir('brainstem-diff-node-a-'), b: tempDir('brainstem-diff-node-b-'), nogit: tempDir('brainstem-no-git-') };
  const nodes: Record<string, ServiceProcess> = {};
  const reaper = new WorkerReaper();

  const api = async (node: string, method: string, path: string, body?: object): Promise<{ status: number; body: Json }> => {
    const n = nodes[node];
    const res = await fetch(`${n.url}/api/v1${path}`, { method, headers: body ? { ...n.auth, 'content-type': 'application/json' } : n.auth, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const diff = (node: string, query = '') => api(node, 'GET', `/coding-sessions/${id}/diff${query}`);

  beforeAll(async () => {
    cluster = await startPgCluster();
    db = await cluster.createDatabase();
    repo = gitRepo({ 'long.txt': numbered(40, 'line'), 'short.txt': 'one\n' });
    const common = { BRAINSTEM_JOURNAL_URL: db.url, BRAINSTEM_NODE_LEASE_TTL_S: '4' };
    nodes.a = await startService({ ...common, BRAINSTEM_NODE_ID: 'a', BRAINSTEM_JOURNAL_DIR: dirs.a.path, BRAINSTEM_API_TOKEN: 'token-a' });
    // Node b has no git at all: a diff it answers can only be the owner's.
    nodes.b = await startService({ ...common, BRAINSTEM_NODE_ID: 'b', BRAINSTEM_JOURNAL_DIR: dirs.b.path, BRAINSTEM_API_TOKEN: 'token-b', PATH: dirs.nogit.path });
    await waitFor(async () => ((await api('b', 'GET', '/cluster')).body.nodes as Json[]).find((n) => n.id === 'a')?.url === nodes.a.url, { ...LONG, what: "b to know a's address" });

    const created = await api('a', 'POST', '/coding-sessions', {
      title: 'Diff across nodes',
      runtime: 'command',
      command: process.execPath,
      args: [resolve(WORKERS, 'git-editor.js'), JSON.stringify({ write: { 'long.txt': numbered(40, 'changed'), 'short.txt': 'two\n', 'added/new.txt': 'new\n' }, commit: 'work on a' })],
      cwd: repo.path,
      isolation: 'worktree',
    });
    expect(created.status).toBe(201);
    id = created.body.id as string;
    await waitFor(async () => (await diff('a')).body.ahead === 1, { ...LONG, what: 'the worker to commit' });
    // Launched once its worktree was prepared, after the create answered (with no pid yet).
    reaper.track((await api('a', 'GET', `/coding-sessions/${id}`)).body.pid);
    await waitFor(async () => (await api('b', 'GET', `/coding-sessions/${id}`)).body.worktree?.state === 'ready', { ...LONG, what: 'b to follow the session' });
  }, 180000);

  afterAll(async () => {
    for (const n of Object.values(nodes)) {
      if (n.child.exitCode === null && n.child.signalCode === null) {
        n.child.kill('SIGTERM');
        await n.exited;
      }
    }
    reaper.killAll();
    repo?.remove();
    for (const d of Object.values(dirs)) d.remove();
    await db?.drop();
    cluster?.stop();
  }, 60000);

  it("Given a's worktree session, Then b answers a's diff: the whole, a page, the next page by its cursor, one file's patch", async () => {
    const whole = await diff('b');
    expect(whole).toEqual(await diff('a'));
    expect(whole.status).toBe(200);
    expect(whole.body).toMatchObject({ id, ahead: 1, files_total: 3, commits: [{ subject: 'work on a' }], next_cursor: null });
    expect((whole.body.files as Json[]).map((f) => f.path).sort()).toEqual(['added/new.txt', 'long.txt', 'short.txt']);

    const first = await diff('b', '?limit=10');
    expect(first).toEqual(await diff('a', '?limit=10'));
    const cursor = first.body.next_cursor as string;
    expect(cursor).toMatch(/^\d+\.\d+$/);
    const next = await diff('b', `?limit=10&cursor=${cursor}`);
    expect(next).toEqual(await diff('a', `?limit=10&cursor=${cursor}`));
    expect(next.status).toBe(200);
    expect(next.body.patches).not.toEqual(first.body.patches);

    const one = await diff('b', '?file=long.txt&limit=20');
    expect(one).toEqual(await diff('a', '?file=long.txt&limit=20'));
    expect(one.body.patches).toEqual([expect.objectContaining({ path: 'long.txt', from_line: 0, complete: false })]);
    const rest = await diff('b', `?file=long.txt&limit=20&cursor=${one.body.next_cursor as string}`);
    expect(rest).toEqual(await diff('a', `?file=long.txt&limit=20&cursor=${one.body.next_cursor as string}`));
    expect(rest.body.patches[0]).toMatchObject({ path: 'long.txt', from_line: 20 });

    // A query b refuses itself, before asking anyone, as a refuses it.
    for (const query of ['?cursor=page-2', '?limit=0', '?file=../outside.txt']) {
      const refused = await diff('b', query);
      expect(refused).toEqual(await diff('a', query));
      expect(refused.status).toBe(400);
    }
  }, 60000);

  it("Given the worktree deleted by hand on a, Then b passes on a's refusal as a gave it: 409 worktree_missing with its path and branch", async () => {
    const worktree = (await api('a', 'GET', `/coding-sessions/${id}`)).body.worktree as Json;
    rmSync(worktree.path as string, { recursive: true, force: true });
    const refused = await diff('b');
    expect(refused).toMatchObject({ status: 409, body: { code: 'worktree_missing', details: { path: worktree.path, branch: worktree.branch } } });
    expect(refused).toEqual(await diff('a'));
  }, 60000);

  it('Given a killed, Then b answers 503 owner_unavailable naming a: while a is within its lease (no answer), and past it (not asked)', async () => {
    nodes.a.child.kill('SIGKILL');
    await nodes.a.exited;
    const unanswered = await diff('b');
    expect(unanswered).toMatchObject({ status: 503, body: { code: 'owner_unavailable', details: { node: 'a' } } });
    expect(unanswered.body.message).toContain('on node a, which could not give its diff');
    await waitFor(async () => ((await api('b', 'GET', '/cluster')).body.nodes as Json[]).find((n) => n.id === 'a')?.state === 'down', { ...LONG, what: 'b to see a down' });
    const past = await diff('b');
    expect(past).toMatchObject({ status: 503, body: { code: 'owner_unavailable', details: { node: 'a' } } });
    expect(past.body.message).toContain('runs on node a, which has not been heard from within its lease');
  }, 60000);
});
