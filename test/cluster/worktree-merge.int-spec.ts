import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GitRepo, gitRepo } from '../support/git-repo';
import { PgCluster, PgDatabase, pgDescribe, startPgCluster } from '../support/pg-cluster';
import { ServiceProcess, startService } from '../support/service-process';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

const describePg = pgDescribe('worktree-merge.int-spec');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describePg("a node merges a worktree session another node owns (two real nodes on one PostgreSQL journal)", () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  let repo: GitRepo;
  const dirs = { a: tempDir('brainstem-wt-node-a-'), b: tempDir('brainstem-wt-node-b-'), nogit: tempDir('brainstem-no-git-') };
  const nodes: Record<string, ServiceProcess> = {};
  const reaper = new WorkerReaper();

  beforeAll(async () => {
    cluster = await startPgCluster();
    db = await cluster.createDatabase();
    repo = gitRepo({ 'shared.txt': 'one\n' });
    const common = { BRAINSTEM_JOURNAL_URL: db.url, BRAINSTEM_NODE_LEASE_TTL_S: '4' };
    nodes.a = await startService({ ...common, BRAINSTEM_NODE_ID: 'a', BRAINSTEM_JOURNAL_DIR: dirs.a.path, BRAINSTEM_API_TOKEN: 'token-a' });
    // Node b has no git at all: whatever git work a merge it takes needs, the owner does.
    nodes.b = await startService({ ...common, BRAINSTEM_NODE_ID: 'b', BRAINSTEM_JOURNAL_DIR: dirs.b.path, BRAINSTEM_API_TOKEN: 'token-b', PATH: dirs.nogit.path });
    // b reads a's diff at the address a advertised once it listened.
    await waitFor(async () => ((await api('b', 'GET', '/cluster')).body.nodes as Json[]).find((n) => n.id === 'a')?.url === nodes.a.url, { timeoutMs: 60000, what: "b to know a's address" });
  }, 180000);

  afterAll(async () => {
    for (const n of Object.values(nodes)) {
      if (n.child.exitCode === null) {
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

  const api = async (node: string, method: string, path: string, body?: object): Promise<{ status: number; body: Json }> => {
    const n = nodes[node];
    const res = await fetch(`${n.url}/api/v1${path}`, { method, headers: body ? { ...n.auth, 'content-type': 'application/json' } : n.auth, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: (await res.json()) as Json };
  };

  it("takes the merge on b, journals its request there, and a performs it with its git: b answers with the outcome, a's checkout has the work", async () => {
    const created = await api('a', 'POST', '/coding-sessions', {
      title: 'Across nodes',
      runtime: 'command',
      command: process.execPath,
      args: [resolve(WORKERS, 'git-editor.js'), JSON.stringify({ write: { 'from-a.txt': 'a\n' }, commit: 'work on a' })],
      cwd: repo.path,
      isolation: 'worktree',
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await waitFor(async () => (await api('a', 'GET', `/coding-sessions/${id}/diff`)).body.ahead === 1, { what: 'the worker to commit', timeoutMs: 60000 });
    reaper.track((await api('a', 'GET', `/coding-sessions/${id}`)).body.pid);
    await waitFor(async () => (await api('b', 'GET', `/coding-sessions/${id}`)).body.worktree?.state === 'ready', { what: 'b to follow the session', timeoutMs: 60000 });

    // b has no git: it reads the diff from a, and answers a's.
    const diffOnB = await api('b', 'GET', `/coding-sessions/${id}/diff`);
    expect(diffOnB).toEqual(await api('a', 'GET', `/coding-sessions/${id}/diff`));
    expect(diffOnB).toMatchObject({ status: 200, body: { id, ahead: 1, files: [{ path: 'from-a.txt', change: 'added' }] } });

    const merged = await api('b', 'POST', `/coding-sessions/${id}/merge`, { strategy: 'ff' });
    expect(merged.status).toBe(200);
    expect(merged.body).toMatchObject({ node: 'a', worktree: { merged: { strategy: 'ff', into: 'main' }, last_op: { op: 'merge', ok: true }, pending_op: null } });
    expect(existsSync(join(repo.path, 'from-a.txt'))).toBe(true);
    expect(repo.git('log', '-1', '--format=%s').trim()).toBe('work on a');

    const events = (await api('a', 'GET', `/journal/events?stream=session-${id}&limit=100`)).body.events as Json[];
    const ops = events.filter((e) => e.type === 'session.worktree_op_requested' || e.type === 'session.worktree_merged');
    expect(ops.map((e) => [e.type, e.meta.actor])).toEqual([
      ['session.worktree_op_requested', 'user'],
      ['session.worktree_merged', 'brainstem'],
    ]);

    // Nothing left to merge: b reads ahead 0 in the diff a gives, and answers so without journaling a request.
    const again = await api('b', 'POST', `/coding-sessions/${id}/merge`, { strategy: 'ff' });
    expect(again).toMatchObject({ status: 409, body: { code: 'nothing_to_merge', details: { base: 'main', ahead: 0 } } });
    const requested = (await api('a', 'GET', `/journal/events?stream=session-${id}&limit=100`)).body.events.filter((e: Json) => e.type === 'session.worktree_op_requested');
    expect(requested).toHaveLength(1);

    // A refusal the owner finds (a conflict, or nothing to merge) comes back to b the same way.
    await api('a', 'POST', `/coding-sessions/${id}/messages`, { text: JSON.stringify({ write: { 'shared.txt': 'from the worker\n' }, commit: 'worker edit' }) });
    repo.write('shared.txt', 'from main\n');
    repo.commitAll('main edit');
    await waitFor(async () => (await api('a', 'GET', `/coding-sessions/${id}/diff`)).body.ahead === 1, { what: 'the second commit', timeoutMs: 60000 });
    const conflict = await api('b', 'POST', `/coding-sessions/${id}/merge`, { strategy: 'merge' });
    expect(conflict).toMatchObject({ status: 409, body: { code: 'merge_conflict', details: { files: ['shared.txt'] } } });
    expect(repo.mergeHead()).toBe(false);
  });
});
