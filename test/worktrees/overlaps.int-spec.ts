import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GitCli, GitResult, GitRunOptions } from '../../src/worktrees/git-cli';
import { CliOverlapGit } from '../../src/worktrees/worktree-overlap.git';
import { OverlapSession } from '../../src/worktrees/worktree-overlap.port';
import { WorktreeOverlaps } from '../../src/worktrees/worktree-overlaps.service';
import { GitRepo, besideRepo, gitRepo } from '../support/git-repo';

/** The real git CLI, noting each command it runs (its first argument), to see what a second read asks of git. */
class CountedGit extends GitCli {
  readonly commands: string[] = [];

  override spawn(args: readonly string[], options: GitRunOptions): Promise<GitResult> {
    this.commands.push(args[0]);
    return super.spawn(args, options);
  }
}

const TEN_LINES = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`);
const withLine = (n: number, text: string) => `${TEN_LINES.map((l, i) => (i === n - 1 ? text : l)).join('\n')}\n`;

/**
 * What a worktree looks like to its worker: its status, what is staged, its index file's bytes, and the repository's
 * refs. Read without optional locks, so this status never refreshes the index it compares.
 */
function stateOf(dir: string) {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C', GIT_OPTIONAL_LOCKS: '0' } });
  const index = resolve(dir, git('rev-parse', '--git-path', 'index').trim());
  return {
    status: git('status', '--porcelain=v1', '--untracked-files=all'),
    staged: git('diff', '--cached'),
    index: createHash('sha256').update(readFileSync(index)).digest('hex'),
    head: git('rev-parse', 'HEAD'),
    refs: git('for-each-ref'),
    stashes: git('stash', 'list'),
  };
}

/**
 * Overlaps predicted with the real git CLI, on one repository and four worktrees of its own: a and b edit the same
 * line of shared.txt (a commits, b leaves it unstaged), c edits another region of it (staged only), d adds a file of
 * its own (untracked). Then a is merged into main, and b, c and d are judged against main as it is now.
 */
describe('worktree overlaps, predicted with the real git CLI', () => {
  let repo: GitRepo;
  let git: CountedGit;
  const sessions: OverlapSession[] = [];
  const dirs: Record<string, string> = {};

  beforeAll(() => {
    repo = gitRepo({ 'shared.txt': withLine(0, ''), 'README.md': 'hello\n' });
    const base = repo.git('rev-parse', 'HEAD').trim();
    for (const [i, name] of ['a', 'b', 'c', 'd'].entries()) {
      const path = besideRepo(repo, `wt-${name}`);
      repo.git('worktree', 'add', '-q', '-b', `brainstem/${name}`, path, 'main');
      dirs[name] = path;
      sessions.push({ session_id: `cs_${name}`, alias: `w${i + 1}`, branch: `brainstem/${name}`, path, repo: repo.path, base_branch: 'main', base_sha: base, created_at: 1000 + i });
    }
    repo.write('shared.txt', withLine(2, 'two by a'), dirs.a);
    repo.commitAll('a edits line 2', dirs.a);
    repo.write('shared.txt', withLine(2, 'two by b'), dirs.b);
    repo.write('shared.txt', withLine(9, 'nine by c'), dirs.c);
    repo.gitIn(dirs.c, 'add', 'shared.txt');
    repo.write('notes/d.txt', 'd\n', dirs.d);
    // What srt leaves while a sandboxed worker runs: an empty file where a protected name was missing.
    writeFileSync(join(dirs.d, '.bashrc'), '');
  });
  afterAll(() => repo.remove());
  beforeEach(() => {
    git = new CountedGit(process.env);
  });

  const overlapsOver = (g: GitCli) => new WorktreeOverlaps(() => sessions, new CliOverlapGit(g), () => Date.parse('2026-01-02T03:04:05Z'), 2);

  it("given committed, unstaged, staged and untracked work, then a snapshot holds all of it and leaves the worktree's files, index and refs as they were", async () => {
    const before = Object.fromEntries(Object.entries(dirs).map(([n, d]) => [n, stateOf(d)]));
    const engine = new CliOverlapGit(git);
    const snapshots = await Promise.all(sessions.map((s) => engine.snapshot(s)));
    expect(snapshots.map((s) => s.files)).toEqual([['shared.txt'], ['shared.txt'], ['shared.txt'], ['notes/d.txt']]);
    // A commit object on the worktree's HEAD, named by no ref, the same one when asked again (nothing changed).
    const b = snapshots[1];
    expect(repo.git('rev-parse', `${b.commit}^`).trim()).toBe(before.b.head.trim());
    expect(repo.git('show', `${b.commit}:shared.txt`)).toBe(withLine(2, 'two by b'));
    expect(repo.git('for-each-ref', '--contains', b.commit)).toBe('');
    expect((await engine.snapshot(sessions[1])).commit).toBe(b.commit);
    expect(snapshots.map((s) => s.base_tip)).toEqual(sessions.map(() => repo.git('rev-parse', 'main').trim()));
    for (const [name, dir] of Object.entries(dirs)) expect({ name, ...stateOf(dir) }).toEqual({ name, ...before[name] });
    expect(existsSync(join(dirs.d, '.bashrc'))).toBe(true);
    // Git was never asked to write a ref or the worktree's own index.
    expect(git.commands.filter((c) => ['update-ref', 'commit', 'stash', 'reset', 'checkout'].includes(c))).toEqual([]);
  });

  it('given the same line edited by two, then a conflict on that file; another region of it, then an overlap without conflict; other files, then no overlap', async () => {
    const report = await overlapsOver(git).overlaps(repo.path);
    expect(report).toEqual({
      repo: repo.path,
      sessions: [
        { session_id: 'cs_a', alias: 'w1', branch: 'brainstem/a', files: ['shared.txt'] },
        { session_id: 'cs_b', alias: 'w2', branch: 'brainstem/b', files: ['shared.txt'] },
        { session_id: 'cs_c', alias: 'w3', branch: 'brainstem/c', files: ['shared.txt'] },
        { session_id: 'cs_d', alias: 'w4', branch: 'brainstem/d', files: ['notes/d.txt'] },
      ],
      pairs: [
        { a: 'cs_a', b: 'cs_b', files: ['shared.txt'], conflict: true, conflicting_paths: ['shared.txt'] },
        { a: 'cs_a', b: 'cs_c', files: ['shared.txt'], conflict: false, conflicting_paths: [] },
        { a: 'cs_a', b: 'cs_d', files: [], conflict: false, conflicting_paths: [] },
        { a: 'cs_b', b: 'cs_c', files: ['shared.txt'], conflict: false, conflicting_paths: [] },
        { a: 'cs_b', b: 'cs_d', files: [], conflict: false, conflicting_paths: [] },
        { a: 'cs_c', b: 'cs_d', files: [], conflict: false, conflicting_paths: [] },
      ],
      base: ['cs_a', 'cs_b', 'cs_c', 'cs_d'].map((session_id) => ({ session_id, base_branch: 'main', conflict: false, conflicting_paths: [] })),
      computed_at: '2026-01-02T03:04:05.000Z',
    });
    // Only the pairs sharing a file were merged by git, and none against main, which has not moved.
    expect(git.commands.filter((c) => c === 'merge-tree')).toHaveLength(3);
  });

  it('given nothing changed since, then a second read asks git for no merge; given one worktree edited, then only its pairs are merged again', async () => {
    const overlaps = overlapsOver(git);
    await overlaps.overlaps(repo.path);
    const merges = () => git.commands.filter((c) => c === 'merge-tree').length;
    expect(merges()).toBe(3);
    await overlaps.overlaps(repo.path);
    expect(merges()).toBe(3);
    repo.write('shared.txt', withLine(9, 'nine by c, again'), dirs.c);
    const again = await overlaps.overlaps(repo.path);
    expect(merges()).toBe(5);
    expect(again.pairs.find((p) => p.a === 'cs_a' && p.b === 'cs_c')).toMatchObject({ conflict: false });
    repo.gitIn(dirs.c, 'checkout', '--', 'shared.txt');
  });

  it('given a merged into main, then b conflicts with main as it is now and c does not; the merge order puts b after the others', async () => {
    const overlaps = overlapsOver(git);
    expect((await overlaps.mergeOrders(repo.path))[0].order.map((s) => [s.alias, s.clean, s.conflicts_with])).toEqual([
      ['w1', true, []],
      ['w3', true, []],
      ['w4', true, []],
      ['w2', false, ['cs_a']],
    ]);
    repo.git('merge', '-q', '--ff-only', 'brainstem/a');
    const report = await overlaps.overlaps(repo.path);
    expect(report.base).toEqual([
      { session_id: 'cs_a', base_branch: 'main', conflict: false, conflicting_paths: [] },
      { session_id: 'cs_b', base_branch: 'main', conflict: true, conflicting_paths: ['shared.txt'] },
      { session_id: 'cs_c', base_branch: 'main', conflict: false, conflicting_paths: [] },
      { session_id: 'cs_d', base_branch: 'main', conflict: false, conflicting_paths: [] },
    ]);
    // a's work is in main now: nothing left of it to merge.
    expect(report.sessions[0].files).toEqual([]);
    const [order] = await overlaps.mergeOrders();
    expect(order.order.map((s) => [s.alias, s.clean, s.base_conflicts])).toEqual([
      ['w1', true, []],
      ['w3', true, []],
      ['w4', true, []],
      ['w2', false, ['shared.txt']],
    ]);
  });

  it('given a path that names no repository with live worktree sessions, then 404 no_worktree_sessions; a symlink to the checkout is the checkout', async () => {
    const overlaps = overlapsOver(git);
    await expect(overlaps.overlaps('/no/such/repo')).rejects.toMatchObject({ code: 'no_worktree_sessions', details: { repo: '/no/such/repo' } });
    await expect(overlaps.overlaps(`${repo.path}/`)).resolves.toMatchObject({ repo: repo.path });
    const link = besideRepo(repo, 'link-to-repo');
    symlinkSync(repo.path, link);
    await expect(overlaps.overlaps(link)).resolves.toMatchObject({ repo: repo.path });
  });
});
