import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
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
 * its last screen can be read. Its exit status is written by the launch script: tmux 3.3's pane_dead_status is not
 * always set (it may mark the pane dead by its terminal's end and never report the status).
 */
export class Terminal {
  private constructor(
    private readonly socket: string,
    private readonly target: string,
    private readonly statusFile: string,
  ) {}

  /** Runs `argv` with exactly `env` in `dir` (where the socket and the launch script are written). */
  static start(dir: string, argv: readonly string[], env: Record<string, string>, size = { cols: 160, rows: 48 }): Terminal {
    if (TMUX === null) throw new Error('tmux is not installed (apt-get install tmux)');
    const script = join(dir, 'run.sh');
    const statusFile = join(dir, 'exit-status');
    const assignments = Object.entries(env).map(([k, v]) => `${k}=${quote(v)}`);
    // A trap (not an ignore, which the program would inherit) keeps the shell alive through Ctrl-C to write the status.
    writeFileSync(script, `#!/bin/sh\ntrap true INT\nenv -i ${assignments.join(' ')} ${argv.map(quote).join(' ')}\necho $? > ${quote(statusFile)}\n`, { mode: 0o700 });
    const t = new Terminal(join(dir, 'tmux.sock'), 'cli', statusFile);
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
    return this.onScreen(waitFor(() => test(this.screen()), { timeoutMs, intervalMs: 100, what }));
  }

  /** Polls until the program exited: its exit status, as a shell gives it (128 + n when signal n ended it). */
  async exited(timeoutMs = 30_000): Promise<number> {
    const status = (): number | undefined => {
      const text = existsSync(this.statusFile) ? readFileSync(this.statusFile, 'utf8') : '';
      return text.endsWith('\n') ? Number(text) : undefined;
    };
    return this.onScreen(waitFor(status, { timeoutMs, intervalMs: 100, what: 'the program to exit' }));
  }

  /** A failure to wait says what the screen showed. */
  private async onScreen<T>(waiting: Promise<T>): Promise<T> {
    try {
      return await waiting;
    } catch (e) {
      throw new Error(`${(e as Error).message}; the screen:\n${this.screen()}`);
    }
  }

  kill(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // already gone
    }
  }
}
