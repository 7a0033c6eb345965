import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from './wait-for';

/** Debian's tmux (`apt-get install tmux`), which .ci/run installs; null when it is not on PATH. */
function findTmux(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v tmux'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

export const TMUX = findTmux();

/** The terminal specs run where tmux is, and always in CI (where a missing tmux fails them rather than skips them). */
export const describeInTerminal: jest.Describe = TMUX !== null || process.env.CI ? describe : describe.skip;

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * A program in a real terminal: a tmux server of its own (its own socket, no user config) running one window of
 * `cols`×`rows`, read with capture-pane and typed into with send-keys. The window stays after the program exits, so
 * its last screen and exit status can be read.
 */
export class Terminal {
  private constructor(
    private readonly socket: string,
    private readonly target: string,
  ) {}

  /** Runs `argv` with exactly `env` in `dir` (where the socket and the launch script are written). */
  static start(dir: string, argv: readonly string[], env: Record<string, string>, size = { cols: 160, rows: 48 }): Terminal {
    if (TMUX === null) throw new Error('tmux is not installed (apt-get install tmux)');
    const script = join(dir, 'run.sh');
    const assignments = Object.entries(env).map(([k, v]) => `${k}=${quote(v)}`);
    writeFileSync(script, `#!/bin/sh\nexec env -i ${assignments.join(' ')} ${argv.map(quote).join(' ')}\n`, { mode: 0o700 });
    const t = new Terminal(join(dir, 'tmux.sock'), 'cli');
    t.tmux('-f', '/dev/null', 'new-session', '-d', '-s', t.target, '-x', String(size.cols), '-y', String(size.rows), script, ';', 'set-option', '-t', t.target, 'remain-on-exit', 'on');
    return t;
  }

  private tmux(...args: string[]): string {
    return execFileSync(TMUX as string, ['-S', this.socket, ...args], { encoding: 'utf8' });
  }

  /** What the window shows, its scrollback included, wrapped lines joined. */
  screen(): string {
    return this.tmux('capture-pane', '-p', '-J', '-S', '-1000', '-t', this.target);
  }

  /** Types text literally, then presses Enter. */
  typeLine(text: string): void {
    this.tmux('send-keys', '-t', this.target, '-l', text);
    this.tmux('send-keys', '-t', this.target, 'Enter');
  }

  /** Presses keys by tmux's names (C-c, C-d). */
  press(...keys: string[]): void {
    this.tmux('send-keys', '-t', this.target, ...keys);
  }

  /** Polls the screen until `test` finds what it looks for (generous deadline: the program may start through swc). */
  async waitForScreen<T>(test: (screen: string) => T | undefined | false, what: string, timeoutMs = 90_000): Promise<T> {
    try {
      return await waitFor(() => test(this.screen()), { timeoutMs, intervalMs: 100, what });
    } catch (e) {
      throw new Error(`${(e as Error).message}; the screen:\n${this.screen()}`);
    }
  }

  /** Polls until the program exited: its exit status, or the number of the signal that ended it. */
  async exited(timeoutMs = 30_000): Promise<{ status: number | null; signal: number | null }> {
    const number = (s: string): number | null => (s === '' ? null : Number(s));
    return waitFor(
      () => {
        const [dead, status, signal] = this.tmux('list-panes', '-t', this.target, '-F', '#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}').trim().split('|');
        return dead === '1' ? { status: number(status), signal: number(signal) } : undefined;
      },
      { timeoutMs, intervalMs: 100, what: 'the program to exit' },
    );
  }

  kill(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // already gone
    }
  }
}
