import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { SessionDiff } from '../../src/sessions/session-worktrees';
import { SessionStatus } from '../../src/sessions/session.status';
import { MergeOrder, OverlapReport } from '../../src/worktrees/worktree-overlaps.service';
import { GitRepo, gitRepo } from '../support/git-repo';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

/** A session's status, with the worktree a session started with isolation has. */
type Started = SessionStatus & { worktree: NonNullable<SessionStatus['worktree']> };
interface ToolInfo {
  name: string;
  parameters: { type: string; properties: Record<string, { type: string }>; required?: string[] };
}

const EDITOR = resolve(WORKERS, 'git-editor.js');
const BRAIN = '/api/v1/session-os/main-brain';
const TEN_LINES = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`);
const withLine = (n: number, text: string) => `${TEN_LINES.map((l, i) => (i === n - 1 ? text : l)).join('\n')}\n`;

/**
 * Four worker sessions in worktrees of one repository, over HTTP: a and b edit line 2 of shared.txt (a commits, b
 * leaves it uncommitted), c edits line 9 of it, d adds a file of its own. The overlaps route and the brain's tools
 * predict a's and b's conflict, and suggest merging b last.
 */
describe('worktree overlaps over HTTP and the brain tools, with command workers and the real git CLI', () => {
  const reaper = new WorkerReaper();
  const t = useTestApp({}, { beforeClose: () => reaper.killAll() });
  let repo: GitRepo;
  let other: GitRepo;
  const s = {} as Record<'a' | 'b' | 'c' | 'd', Started>;

  const api = async <T = unknown>(method: 'GET' | 'POST', url: string, payload?: object): Promise<{ status: number; body: T }> => {
    const res = await t.inject({ method, url: `/api/v1${url}`, payload });
    return { status: res.statusCode, body: res.json<T>() };
  };
  const brain = async <T = unknown>(tool: string, args: object): Promise<{ status: number; body: { result: T } }> => {
    const res = await t.rawInject({ method: 'POST', url: `${BRAIN}/tools/${tool}`, payload: args, headers: t.auth('main_brain') });
    return { status: res.statusCode, body: res.json() };
  };
  const overlapsOf = (repoPath: string) => api<OverlapReport>('GET', `/worktrees/overlaps?repo=${encodeURIComponent(repoPath)}`);
  const stateOf = async (id: string) => (await api<SessionStatus>('GET', `/coding-sessions/${id}`)).body.state;
  /** A worker that makes `step` in its worktree, waited for until its diff shows `file` changed. */
  const start = async (title: string, step: object, file: string) => {
    const created = await api<SessionStatus>('POST', '/coding-sessions', { title, runtime: 'command', command: process.execPath, args: [EDITOR, JSON.stringify(step)], cwd: repo.path, isolation: 'worktree' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await waitFor(async () => ((await api<Partial<SessionDiff>>('GET', `/coding-sessions/${id}/diff`)).body.files ?? []).some((f) => f.path === file), { what: `${title} to change ${file}` });
    const status = (await api<Started>('GET', `/coding-sessions/${id}`)).body;
    reaper.track(status.pid);
    return status;
  };

  beforeAll(async () => {
    repo = gitRepo({ 'shared.txt': withLine(0, ''), 'README.md': 'hello\n' });
    other = gitRepo({ 'x.txt': 'x\n' });
    s.a = await start('Edit A', { write: { 'shared.txt': withLine(2, 'two by a') }, commit: 'a edits line 2' }, 'shared.txt');
    s.b = await start('Edit B', { write: { 'shared.txt': withLine(2, 'two by b') } }, 'shared.txt');
    s.c = await start('Edit C', { write: { 'shared.txt': withLine(9, 'nine by c') }, commit: 'c edits line 9' }, 'shared.txt');
    s.d = await start('Edit D', { write: { 'd.txt': 'd\n' }, commit: 'd adds d.txt' }, 'd.txt');
  });
  afterAll(() => {
    reaper.killAll();
    repo.remove();
    other.remove();
  });

  it("answers the repository's sessions with their files, every pair (a conflict on the line both edited, uncommitted work included) and each against its base", async () => {
    const worktreeOfB = (...args: string[]) => execFileSync('git', args, { cwd: s.b.worktree.path, encoding: 'utf8', env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
    const before = [worktreeOfB('status', '--porcelain'), worktreeOfB('diff', '--cached')];
    const res = await overlapsOf(repo.path);
    expect(res.status).toBe(200);
    const { a, b, c, d } = s;
    expect(res.body).toEqual({
      repo: repo.path,
      sessions: [
        { session_id: a.id, alias: a.alias, branch: a.worktree.branch, files: ['shared.txt'] },
        { session_id: b.id, alias: b.alias, branch: b.worktree.branch, files: ['shared.txt'] },
        { session_id: c.id, alias: c.alias, branch: c.worktree.branch, files: ['shared.txt'] },
        { session_id: d.id, alias: d.alias, branch: d.worktree.branch, files: ['d.txt'] },
      ],
      pairs: [
        { a: a.id, b: b.id, files: ['shared.txt'], conflict: true, conflicting_paths: ['shared.txt'] },
        { a: a.id, b: c.id, files: ['shared.txt'], conflict: false, conflicting_paths: [] },
        { a: a.id, b: d.id, files: [], conflict: false, conflicting_paths: [] },
        { a: b.id, b: c.id, files: ['shared.txt'], conflict: false, conflicting_paths: [] },
        { a: b.id, b: d.id, files: [], conflict: false, conflicting_paths: [] },
        { a: c.id, b: d.id, files: [], conflict: false, conflicting_paths: [] },
      ],
      base: [a, b, c, d].map((x) => ({ session_id: x.id, base_branch: 'main', conflict: false, conflicting_paths: [] })),
      computed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    // b's uncommitted edit is where it was: neither staged nor committed by the snapshot.
    expect([worktreeOfB('status', '--porcelain'), worktreeOfB('diff', '--cached')]).toEqual(before);
    expect(before).toEqual([' M shared.txt\n', '']);
  });

  it.each<[string, string, number, string, RegExp]>([
    ['no repo', '', 400, 'invalid_input', /repo/],
    ['a relative repo', '?repo=src/app', 400, 'invalid_input', /repo: must be an absolute path/],
    ['two repos', '?repo=/a&repo=/b', 400, 'invalid_input', /repo/],
    ['a folder that is no repository', '?repo=/no/such/repo', 404, 'no_worktree_sessions', /no live worktree session of the repository \/no\/such\/repo runs on this node/],
  ])('given %s, then %d %s', async (_what, query, status, code, message) => {
    const res = await api('GET', `/worktrees/overlaps${query}`);
    expect(res).toMatchObject({ status, body: { statusCode: status, code, message: expect.stringMatching(message) } });
  });

  it('given a repository with no worktree session, then 404 no_worktree_sessions naming it', async () => {
    expect(await overlapsOf(other.path)).toMatchObject({ status: 404, body: { code: 'no_worktree_sessions', details: { repo: other.path } } });
  });

  it('lists overlaps and suggest_merge_order to the brain, ungated, with an optional repo', async () => {
    const tools = (await t.rawInject({ method: 'GET', url: `${BRAIN}/tools`, headers: t.auth('main_brain') })).json<{ tools: ToolInfo[] }>().tools;
    for (const name of ['overlaps', 'suggest_merge_order']) {
      const tool = tools.find((x) => x.name === name);
      expect(tool?.parameters).toMatchObject({ type: 'object', properties: { repo: { type: 'string' } } });
      expect(tool?.parameters.required ?? []).toEqual([]);
    }
    const all = await brain<{ repos: OverlapReport[] }>('overlaps', {});
    expect(all.status).toBe(200);
    expect(all.body.result.repos).toEqual([(await overlapsOf(repo.path)).body].map((r) => ({ ...r, computed_at: expect.any(String) })));
    const one = await brain<{ repos: OverlapReport[] }>('overlaps', { repo: repo.path });
    expect(one.body.result.repos.map((r) => r.repo)).toEqual([repo.path]);
    expect(await brain('overlaps', { repo: other.path })).toMatchObject({ status: 404, body: { code: 'no_worktree_sessions' } });
    expect(await brain('overlaps', { repo: 'relative' })).toMatchObject({ status: 400, body: { code: 'invalid_input' } });
  });

  it('suggests merging the conflicting one after the others, naming what it conflicts with; nothing is merged', async () => {
    const { a, b, c, d } = s;
    const head = repo.git('rev-parse', 'main');
    const res = await brain('suggest_merge_order', {});
    expect(res.status).toBe(200);
    expect(res.body.result).toEqual({
      repos: [
        {
          repo: repo.path,
          order: [
            { session_id: a.id, alias: a.alias, branch: a.worktree.branch, clean: true, conflicts_with: [], base_conflicts: [] },
            { session_id: c.id, alias: c.alias, branch: c.worktree.branch, clean: true, conflicts_with: [], base_conflicts: [] },
            { session_id: d.id, alias: d.alias, branch: d.worktree.branch, clean: true, conflicts_with: [], base_conflicts: [] },
            { session_id: b.id, alias: b.alias, branch: b.worktree.branch, clean: false, conflicts_with: [a.id], base_conflicts: [] },
          ],
          computed_at: expect.any(String),
        },
      ],
    });
    expect(repo.git('rev-parse', 'main')).toBe(head);
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('given a merged into main and its worker stopped, then it is left out, and b conflicts with main as it is now; an exited session not merged stays', async () => {
    const { a, b, d } = s;
    expect((await api('POST', `/coding-sessions/${a.id}/merge`, { strategy: 'ff' })).status).toBe(200);
    await api('POST', `/coding-sessions/${a.id}/stop`, { grace_ms: 1000 });
    await api('POST', `/coding-sessions/${d.id}/stop`, { grace_ms: 1000 });
    await waitFor(async () => (await stateOf(d.id)) === 'exited' && (await stateOf(a.id)) === 'exited', { what: 'a and d to exit' });
    const res = await overlapsOf(repo.path);
    expect(res.body.sessions.map((x) => x.alias)).toEqual([b.alias, s.c.alias, d.alias]);
    expect(res.body.base).toEqual([
      { session_id: b.id, base_branch: 'main', conflict: true, conflicting_paths: ['shared.txt'] },
      { session_id: s.c.id, base_branch: 'main', conflict: false, conflicting_paths: [] },
      { session_id: d.id, base_branch: 'main', conflict: false, conflicting_paths: [] },
    ]);
    const { order } = (await brain<{ repos: MergeOrder[] }>('suggest_merge_order', { repo: repo.path })).body.result.repos[0];
    expect(order.map((x) => [x.alias, x.clean, x.base_conflicts])).toEqual([
      [s.c.alias, true, []],
      [d.alias, true, []],
      [b.alias, false, ['shared.txt']],
    ]);
  });
});
