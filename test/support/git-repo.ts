import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from './temp-dir';

/** A real git repository in a temp dir, for the worktree specs: files written and committed with the real git CLI. */
export interface GitRepo {
  /** The checkout's folder (its real path, as git reports it). */
  readonly path: string;
  git(...args: string[]): string;
  /** Runs git in another folder (a worktree of this repository). */
  gitIn(dir: string, ...args: string[]): string;
  write(file: string, content: string | Buffer, dir?: string): void;
  read(file: string, dir?: string): string;
  commitAll(message: string, dir?: string): string;
  /** Whether a merge was left half-done (`.git/MERGE_HEAD`). */
  mergeHead(): boolean;
  remove(): void;
}

const IDENTITY = ['-c', 'user.name=Spec', '-c', 'user.email=spec@example.invalid'];

/** `files` are committed on `main` as the first commit. */
export function gitRepo(files: Record<string, string> = { 'README.md': 'hello\n' }, prefix = 'brainstem-repo-'): GitRepo {
  const dir = tempDir(prefix);
  let path: string | null = null;
  const root = () => (path ??= init());
  const run = (cwd: string, args: string[]) => execFileSync('git', [...IDENTITY, ...args], { cwd, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
  const write = (file: string, content: string | Buffer, at = root()) => {
    mkdirSync(dirname(join(at, file)), { recursive: true });
    writeFileSync(join(at, file), content);
  };
  function init(): string {
    const p = join(realpathSync(dir.path), 'repo');
    mkdirSync(p);
    run(p, ['init', '-q', '-b', 'main']);
    run(p, ['config', 'user.name', 'Spec']);
    run(p, ['config', 'user.email', 'spec@example.invalid']);
    for (const [file, content] of Object.entries(files)) write(file, content, p);
    run(p, ['add', '-A']);
    run(p, ['commit', '-q', '-m', 'initial']);
    return p;
  }
  return {
    get path() {
      return root();
    },
    git: (...args) => run(root(), args),
    gitIn: (cwd, ...args) => run(cwd, args),
    write,
    read: (file, at = root()) => readFileSync(join(at, file), 'utf8'),
    commitAll: (message, at = root()) => {
      run(at, ['add', '-A']);
      run(at, ['commit', '-q', '-m', message]);
      return run(at, ['rev-parse', 'HEAD']).trim();
    },
    mergeHead: () => existsSync(join(root(), '.git', 'MERGE_HEAD')),
    remove: () => dir.remove(),
  };
}

/** A folder next to the repository (inside the same temp dir) for worktrees: never inside the checkout. */
export function besideRepo(repo: GitRepo, name: string): string {
  return join(dirname(repo.path), name);
}
