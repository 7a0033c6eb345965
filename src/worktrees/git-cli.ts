import { spawn } from 'node:child_process';
import { DomainError } from '../common/domain-error';

/** What a git command gave: its exit code, its output (stdout cut at maxBytes, saying so) and its error text. */
export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
  truncated: boolean;
}

export interface GitRunOptions {
  /** The directory git runs in (`-C`). */
  cwd: string;
  /** Exit codes that are answers rather than failures (merge-tree's 1: conflicts); 0 always is. */
  ok?: readonly number[];
  /** stdout kept at most, in bytes; past it the process is killed and the result says truncated. */
  maxBytes?: number;
  /** Variables on top of the runner's environment (a committer's identity). */
  env?: Record<string, string>;
}

const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Variables that would point git at another repository, index or object store than the one it runs in: the service's
 * own environment (started from a hook, say) must not leak them into the commands it runs.
 */
const REPOSITORY_VARIABLES = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
];

/**
 * Debian's git CLI, run with an argument array (execFile-style, never a shell): nothing in an argument is ever read by
 * a shell, and refs a user gives are judged by git itself (check-ref-format, rev-parse --verify) before any command
 * takes them as a ref. Reads run without optional locks, so a `git status` here never takes the index lock a worker's
 * own git command in the same worktree wants; paths are literal (a file named `*` is that file). Messages are in C.
 */
export class GitCli {
  private readonly env: Record<string, string>;

  constructor(
    env: Readonly<Record<string, string | undefined>>,
    private readonly binary = 'git',
  ) {
    const clean: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) if (v !== undefined && !REPOSITORY_VARIABLES.includes(k)) clean[k] = v;
    this.env = { ...clean, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', GIT_LITERAL_PATHSPECS: '1' };
  }

  /** Runs `git <args>` in `cwd`; an exit code outside `ok` (or a git that cannot be started) is a git_failed DomainError. */
  async run(args: readonly string[], options: GitRunOptions): Promise<GitResult> {
    const result = await this.spawn(args, options);
    if (result.code !== 0 && !(options.ok ?? []).includes(result.code)) {
      const said = result.stderr.trim().split('\n').slice(-3).join(' ') || `exit code ${result.code}`;
      throw new DomainError('git_failed', `git ${args[0]} failed in ${options.cwd}: ${said}`, { command: args[0], code: result.code });
    }
    return result;
  }

  /** Runs it and answers whatever it exits with (code -1: it could not be started). */
  spawn(args: readonly string[], options: GitRunOptions): Promise<GitResult> {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    return new Promise((resolve) => {
      const child = spawn(this.binary, ['-c', 'core.quotePath=false', ...args], { cwd: options.cwd, env: { ...this.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let bytes = 0;
      let truncated = false;
      child.stdout.on('data', (chunk: Buffer) => {
        if (truncated) return;
        if (bytes + chunk.length > maxBytes) {
          out.push(chunk.subarray(0, maxBytes - bytes));
          truncated = true;
          child.kill('SIGKILL');
          return;
        }
        bytes += chunk.length;
        out.push(chunk);
      });
      child.stderr.on('data', (chunk: Buffer) => {
        if (err.length < 256) err.push(chunk);
      });
      child.on('error', (e) => resolve({ code: -1, stdout: '', stderr: e.message, truncated: false }));
      child.on('close', (code) =>
        resolve({ code: truncated ? 0 : (code ?? -1), stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), truncated }),
      );
    });
  }

  /** `git --version`'s output, or null when git cannot be run. */
  async version(): Promise<string | null> {
    const r = await this.spawn(['--version'], { cwd: '/' });
    return r.code === 0 ? r.stdout : null;
  }
}
