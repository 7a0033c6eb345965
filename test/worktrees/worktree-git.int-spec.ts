import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GitCli } from '../../src/worktrees/git-cli';
import { CliWorktreeGit } from '../../src/worktrees/worktree-git';
import { repositoryFolder } from '../../src/worktrees/worktree-names';
import { GitRepo, besideRepo, gitRepo } from '../support/git-repo';

describe('worktrees with the real git CLI, in temp repositories', () => {
  let repo: GitRepo;
  let git: CliWorktreeGit;
  let folder: string;
  const cursor = { file: 0, line: 0 };

  beforeEach(async () => {
    repo = gitRepo({ 'shared.txt': 'one\ntwo\nthree\n', 'README.md': 'hello\n' });
    git = new CliWorktreeGit(new GitCli(process.env));
    expect(await git.check()).toBeNull();
    folder = repositoryFolder(besideRepo(repo, 'worktrees'), repo.path);
  });
  afterEach(() => repo.remove());

  const add = async (alias: string, title = 'edit') => {
    const sha = repo.git('rev-parse', 'HEAD').trim();
    const wt = await git.addWorktree({ repo: repo.path, folder, alias, title, base_sha: sha });
    await git.prepare({ repo: repo.path, path: wt.path, copy: [] });
    return { ...wt, base_sha: sha };
  };
  const diffOf = (wt: { path: string; branch: string; base_sha: string }, file: string | null = null) =>
    git.diff({ path: wt.path, branch: wt.branch, base_ref: 'main', base_branch: 'main', base_sha: wt.base_sha, file, cursor, limit: 1000 });
  const merge = (wt: { path: string; branch: string }, strategy: 'ff' | 'merge' | 'rebase', alias = 'w1') =>
    git.merge({ repo: repo.path, branch: wt.branch, path: wt.path, base_branch: 'main', strategy, alias, op_id: `op${alias}`, folder: true, scratch: folder });

  it('given a title that is taken as a branch, when a worktree is added, then it gets a number, and its files are checked out with the named untracked files copied in', async () => {
    repo.git('branch', 'brainstem/w1-fix-it');
    repo.write('.env', 'SECRET=1\n');
    repo.write('config/local.json', '{}\n');
    const sha = repo.git('rev-parse', 'HEAD').trim();
    const wt = await git.addWorktree({ repo: repo.path, folder, alias: 'w1', title: 'Fix it!', base_sha: sha });
    expect(wt).toEqual({ branch: 'brainstem/w1-fix-it-2', path: join(folder, 'w1-fix-it-2') });
    const copied = await git.prepare({ repo: repo.path, path: wt.path, copy: ['.env', 'config/local.json', 'missing.txt', '../outside'] });
    expect(copied).toEqual({ copied: ['.env', 'config/local.json'], missing: ['missing.txt'] });
    expect(repo.read('shared.txt', wt.path)).toBe('one\ntwo\nthree\n');
    expect(repo.read('.env', wt.path)).toBe('SECRET=1\n');
  });

  it('given two worktrees editing one file differently, then each diff shows only its own change; the first fast-forwards, the second conflicts and leaves the main checkout as it was', async () => {
    const a = await add('w1', 'a');
    const b = await add('w2', 'b');
    repo.write('shared.txt', 'one\nTWO from a\nthree\n', a.path);
    repo.commitAll('a edits', a.path);
    repo.write('shared.txt', 'one\nTWO from b\nthree\n', b.path);
    repo.commitAll('b edits', b.path);

    const da = await diffOf(a);
    expect(da.files).toEqual([{ path: 'shared.txt', old_path: null, change: 'modified', additions: 1, deletions: 1, binary: false, uncommitted: false }]);
    expect(da.patches[0].lines.filter((l) => l.kind === 'add').map((l) => l.text)).toEqual(['TWO from a']);
    expect([da.ahead, da.behind, da.commits.map((c) => c.subject)]).toEqual([1, 0, ['a edits']]);
    const db = await diffOf(b);
    expect(db.patches[0].lines.filter((l) => l.kind === 'add').map((l) => l.text)).toEqual(['TWO from b']);

    expect(await merge(a, 'ff')).toMatchObject({ ok: true, step: 'fast_forward', into: 'main', checkout_updated: true });
    expect(repo.read('shared.txt')).toBe('one\nTWO from a\nthree\n');

    // b's diff is still only b's own change, though main moved on: it is taken from where b left main.
    const after = await diffOf(b);
    expect(after.patches[0].lines.filter((l) => l.kind !== 'same' && l.kind !== 'hunk').map((l) => `${l.kind} ${l.text}`)).toEqual(['del two', 'add TWO from b']);
    expect([after.ahead, after.behind]).toEqual([1, 1]);

    const mainBefore = repo.git('rev-parse', 'HEAD');
    for (const strategy of ['ff', 'merge', 'rebase'] as const) {
      const out = await merge(b, strategy, 'w2');
      expect(out.ok).toBe(false);
      if (!out.ok) expect(out.refusal.code).toBe(strategy === 'ff' ? 'not_fast_forward' : 'merge_conflict');
      if (!out.ok && strategy !== 'ff') expect(out.refusal.details).toMatchObject({ files: ['shared.txt'] });
    }
    expect(repo.git('rev-parse', 'HEAD')).toBe(mainBefore);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(repo.mergeHead()).toBe(false);
    expect(repo.git('worktree', 'list').split('\n').filter((l) => l.includes('.rebase-'))).toEqual([]);
  });

  it('given the base moved without conflict, then merge records a merge commit and rebase replays the commits; the main checkout follows', async () => {
    const a = await add('w1', 'a');
    repo.write('a.txt', 'from a\n', a.path);
    repo.commitAll('a adds a file', a.path);
    repo.write('README.md', 'hello again\n');
    repo.commitAll('main moves');
    const merged = await merge(a, 'merge');
    expect(merged).toMatchObject({ ok: true, step: 'merge_commit', checkout_updated: true });
    expect(repo.git('log', '-1', '--format=%P').trim().split(' ')).toHaveLength(2);
    expect(repo.read('a.txt')).toBe('from a\n');

    const b = await add('w2', 'b');
    repo.write('b.txt', 'from b\n', b.path);
    repo.commitAll('b adds a file', b.path);
    repo.write('README.md', 'hello a third time\n');
    repo.commitAll('main moves again');
    const rebased = await merge(b, 'rebase', 'w2');
    expect(rebased).toMatchObject({ ok: true, step: 'rebase', checkout_updated: true });
    expect(repo.git('log', '-2', '--format=%s').trim().split('\n')).toEqual(['b adds a file', 'main moves again']);
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('given uncommitted changes in the main checkout, then a merge touching them is refused naming them, one not touching them goes ahead', async () => {
    const a = await add('w1', 'a');
    repo.write('shared.txt', 'changed by a\n', a.path);
    repo.commitAll('a', a.path);
    repo.write('shared.txt', 'my own edit\n');
    const out = await merge(a, 'ff');
    expect(out).toMatchObject({ ok: false, refusal: { code: 'main_checkout_dirty', details: { files: ['shared.txt'] } } });
    expect(repo.read('shared.txt')).toBe('my own edit\n');
    repo.git('checkout', '--', 'shared.txt');
    repo.write('README.md', 'unrelated edit\n');
    expect(await merge(a, 'ff')).toMatchObject({ ok: true });
    expect(repo.read('README.md')).toBe('unrelated edit\n');
  });

  it('given a worktree with uncommitted work, then the diff counts it, a remove is refused naming the files, and removed only when forced', async () => {
    const a = await add('w1', 'a');
    repo.write('new.txt', 'x\ny\n', a.path);
    repo.write('logo.bin', Buffer.from([0, 1, 2, 3, 0]), a.path);
    const d = await diffOf(a);
    expect(d.files.map((f) => [f.path, f.change, f.additions, f.binary, f.uncommitted])).toEqual([
      ['logo.bin', 'added', null, true, true],
      ['new.txt', 'added', 2, false, true],
    ]);
    expect(d.patches.map((p) => [p.path, p.binary, p.lines.length])).toEqual([
      ['logo.bin', true, 0],
      ['new.txt', false, 3],
    ]);
    const refused = await git.remove({ repo: repo.path, path: a.path, branch: a.branch, branch_delete: 'force', force: false });
    expect(refused).toMatchObject({ ok: false, refusal: { code: 'worktree_dirty', details: { files: ['logo.bin', 'new.txt'] } } });
    expect(existsSync(join(a.path, 'new.txt'))).toBe(true);
    expect(await git.remove({ repo: repo.path, path: a.path, branch: a.branch, branch_delete: 'force', force: true })).toEqual({ ok: true, branch_kept: false });
    expect(existsSync(a.path)).toBe(false);
    expect(repo.git('branch', '--list', a.branch).trim()).toBe('');
  });

  it('given a worktree folder deleted by hand, then prune forgets it, and a remove keeping the branch still answers', async () => {
    const a = await add('w1', 'a');
    repo.write('x.txt', 'x\n', a.path);
    repo.commitAll('x', a.path);
    await import('node:fs/promises').then((fs) => fs.rm(a.path, { recursive: true, force: true }));
    expect(await git.exists(a.path)).toBe(false);
    expect(await git.remove({ repo: repo.path, path: a.path, branch: a.branch, branch_delete: 'keep', force: false })).toEqual({ ok: true, branch_kept: true });
    expect((await git.worktrees(repo.path)).map((w) => w.path)).toEqual([repo.path]);
    expect(repo.git('branch', '--list', a.branch).trim()).toBe(a.branch);
  });

  it('judges refs: an unknown one resolves to nothing, an option-like one too, a malformed branch name is named', async () => {
    expect(await git.resolveCommit(repo.path, 'main')).toMatch(/^[0-9a-f]{40}$/);
    expect(await git.resolveCommit(repo.path, 'no-such-branch')).toBeNull();
    expect(await git.resolveCommit(repo.path, '--output=/tmp/x')).toBeNull();
    expect(await git.branchNameProblem(repo.path, 'a..b')).toBe('"a..b" is not a valid branch name');
    expect(await git.branchNameProblem(repo.path, '@{-1}')).toBe('"@{-1}" is not a valid branch name');
    expect(await git.branchNameProblem(repo.path, 'feature/x')).toBeNull();
    expect(await git.checkoutOf(join(repo.path))).toMatchObject({ toplevel: repo.path, head_branch: 'main' });
    expect(await git.checkoutOf('/')).toBeNull();
  });
});
