import { mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GitRepo, besideRepo, gitRepo } from '../support/git-repo';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Bad input to isolation answers 400 with a clear code, and nothing is created: no session, no journal event, no
 * worktree folder, no branch.
 */
describe('worktree isolation refuses bad input, creating nothing', () => {
  const reaper = new WorkerReaper();
  const t = useTestApp({}, { beforeClose: () => reaper.killAll() });
  let repo: GitRepo;
  const plain = tempDir('brainstem-not-git-');
  beforeAll(() => {
    repo = gitRepo({ 'a.txt': 'a\n' });
    repo.git('worktree', 'add', '-q', besideRepo(repo, 'elsewhere'), '-b', 'elsewhere');
    mkdirSync(join(plain.path, 'sub'));
  });
  afterAll(() => {
    reaper.killAll();
    repo.remove();
    plain.remove();
  });

  const create = async (over: object): Promise<{ status: number; body: Json }> => {
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/coding-sessions',
      payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: repo.path, isolation: 'worktree', ...over },
    });
    return { status: res.statusCode, body: res.json() };
  };
  const nothingCreated = async () => {
    expect((await t.inject({ method: 'GET', url: '/api/v1/coding-sessions' })).json().sessions).toEqual([]);
    const events = (await t.inject({ method: 'GET', url: '/api/v1/journal/events?limit=1000' })).json().events as Json[];
    expect(events.filter((e) => e.stream.startsWith('session'))).toEqual([]);
    expect(repo.git('branch', '--list', 'brainstem/*')).toBe('');
    expect(repo.git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(2);
    const root = t.config.worktrees.dir;
    expect(readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).flatMap((e) => readdirSync(join(root, e.name)))).toEqual([]);
  };
  beforeAll(() => mkdirSync(t.config.worktrees.dir, { recursive: true }));

  it.each<[string, number, string, object, RegExp]>([
    ['a cwd outside any git repository', 400, 'not_a_git_repository', { cwd: join(plain.path, 'sub') }, /is not in a git repository/],
    ['a base_ref that names no commit', 400, 'unknown_ref', { base_ref: 'no-such-branch' }, /base_ref: "no-such-branch" names no commit/],
    ['a base_ref that looks like an option', 400, 'invalid_input', { base_ref: '--upload-pack=x' }, /base_ref: must be a git ref/],
    ['a branch to reuse that does not exist', 400, 'unknown_ref', { branch: 'nope' }, /branch: "nope" is not a branch/],
    ['a branch name git refuses', 400, 'invalid_ref', { branch: 'a..b' }, /"a\.\.b" is not a valid branch name/],
    ['a branch checked out in the main checkout', 409, 'branch_checked_out', { branch: 'main' }, /checked out in the main checkout/],
    ['a worktree path out of the tree', 400, 'path_outside_tree', { worktree: '/etc' }, /\/etc is not a worktree of the repository/],
    ['a worktree path that does not exist', 400, 'path_outside_tree', { worktree: '/no/such/dir' }, /not a worktree of the repository/],
    ['a relative worktree path', 400, 'path_outside_tree', { worktree: '../elsewhere' }, /not a worktree of the repository/],
    ['the main checkout itself as a worktree to reuse', 400, 'path_outside_tree', { worktree: '<repo>' }, /is not a worktree of the repository/],
    ['base_ref without isolation', 400, 'invalid_input', { isolation: 'none', base_ref: 'main' }, /base_ref: only with isolation "worktree"/],
    ['an isolation that does not exist', 400, 'invalid_input', { isolation: 'container' }, /isolation/],
  ])('given %s, then %i %s, and nothing is created', async (_what, status, code, over, message) => {
    const body = JSON.parse(JSON.stringify(over).replace('<repo>', repo.path));
    const res = await create(body);
    expect([res.status, res.body.code]).toEqual([status, code]);
    expect(res.body.message).toMatch(message);
    await nothingCreated();
  });

  it('given a diff file that leads out of the tree, then 400 path_outside_tree; an unknown cursor, then 400', async () => {
    const s = await create({ title: 'diffs' });
    expect(s.status).toBe(201);
    // The worker starts once its worktree is prepared, after the create answered: found by its status, then reaped.
    const running = await waitFor(async () => {
      const now = (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${s.body.id}` })).json() as Json;
      return now.pid !== null || now.state === 'exited' ? now : undefined;
    }, { what: 'the worker started in its worktree' });
    reaper.track(running.pid);
    for (const file of ['../../etc/passwd', '/etc/passwd', 'a/../../b']) {
      const res = await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${s.body.id}/diff?file=${encodeURIComponent(file)}` });
      expect([res.statusCode, res.json().code]).toEqual([400, 'path_outside_tree']);
    }
    const cursor = await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${s.body.id}/diff?cursor=abc` });
    expect([cursor.statusCode, cursor.json().code]).toEqual([400, 'invalid_input']);
    const strategy = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.body.id}/merge`, payload: { strategy: 'octopus' } });
    expect([strategy.statusCode, strategy.json().code]).toEqual([400, 'invalid_input']);
  });
});

describe('worktree isolation with the worktrees folder inside the repository', () => {
  let repo: GitRepo;
  const t = useTestApp(() => {
    repo = gitRepo({ 'a.txt': 'a\n' });
    return { BRAINSTEM_WORKTREES_DIR: join(repo.path, '.worktrees') };
  });
  afterAll(() => repo.remove());

  it('refuses a create with 400 worktrees_dir_in_repository naming the variable to set, and adds nothing', async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'command', command: process.execPath, cwd: repo.path, isolation: 'worktree' } });
    expect([res.statusCode, res.json().code]).toEqual([400, 'worktrees_dir_in_repository']);
    expect(res.json().message).toMatch(/set BRAINSTEM_WORKTREES_DIR to a folder outside it/);
    expect(repo.git('branch', '--list', 'brainstem/*')).toBe('');
    expect((await t.inject({ method: 'GET', url: '/api/v1/coding-sessions' })).json().sessions).toEqual([]);
  });
});
