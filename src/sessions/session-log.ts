import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const DEFAULT_LOG_CAP_BYTES = 1 << 20;

/**
 * A worker's stdout/stderr on disk, bounded: when the live file would pass the cap it is rotated to
 * `<name>.1` (replacing the previous one), so a session never holds more than two caps of output on
 * disk and nothing in memory. Writes are synchronous: the pipe is not read faster than the disk takes it.
 * A write runs in a pipe's data handler, where a throw would end the service: a failing disk (full, the
 * directory removed) drops the output, reports the first error of a run of them, and the next write starts afresh.
 */
export class SessionLog {
  private fd: number | null = null;
  private size = 0;
  private failing = false;

  constructor(
    private readonly path: string,
    private readonly capBytes: number = DEFAULT_LOG_CAP_BYTES,
    private readonly onError: (error: Error) => void = () => undefined,
  ) {}

  static in(dir: string, sessionId: string, capBytes?: number, onError?: (error: Error) => void): SessionLog {
    return new SessionLog(join(dir, `${sessionId}.log`), capBytes, onError);
  }

  write(chunk: Buffer | string): void {
    let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (data.length === 0) return;
    if (data.length > this.capBytes) data = data.subarray(data.length - this.capBytes);
    try {
      this.append(data);
      this.failing = false;
    } catch (e) {
      this.close();
      if (!this.failing) this.onError(e as Error);
      this.failing = true;
    }
  }

  /** The last n lines across the rotated and the live file. */
  tail(n: number): string[] {
    const text = [`${this.path}.1`, this.path]
      .filter((p) => existsSync(p))
      .map((p) => readFileSync(p, 'utf8'))
      .join('');
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    return n <= 0 ? [] : lines.slice(-n);
  }

  close(): void {
    const fd = this.fd;
    this.fd = null;
    if (fd !== null) closeSync(fd);
  }

  private append(data: Buffer): void {
    const fd = this.open();
    if (this.size + data.length > this.capBytes) {
      this.rotate();
      return this.append(data);
    }
    writeSync(fd, data);
    this.size += data.length;
  }

  private open(): number {
    if (this.fd === null) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.fd = openSync(this.path, 'a');
      this.size = fstatSync(this.fd).size;
    }
    return this.fd;
  }

  private rotate(): void {
    this.close();
    renameSync(this.path, `${this.path}.1`);
    this.open();
  }
}

export const MAX_LINE_CHARS = 1 << 20;
/** How much of a dropped line onOverflow gets: enough to tell what the line was. */
export const OVERFLOW_HEAD_CHARS = 4096;

/**
 * Splits a byte stream into lines without unbounded buffering: a line longer than maxLine is dropped
 * (onOverflow gets its first OVERFLOW_HEAD_CHARS) instead of accumulating.
 */
export class LineSplitter {
  private buf = '';
  private skipping = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLine = MAX_LINE_CHARS,
    private readonly onOverflow: (head: string) => void = () => undefined,
  ) {}

  push(chunk: string): void {
    let start = 0;
    for (let i = chunk.indexOf('\n'); i >= 0; i = chunk.indexOf('\n', start)) {
      const piece = chunk.slice(start, i);
      start = i + 1;
      if (this.skipping) {
        this.skipping = false;
        this.buf = '';
        continue;
      }
      const line = this.buf + piece;
      this.buf = '';
      if (line.length > this.maxLine) this.onOverflow(line.slice(0, OVERFLOW_HEAD_CHARS));
      else this.onLine(line);
    }
    if (this.skipping) return;
    this.buf += chunk.slice(start);
    if (this.buf.length > this.maxLine) {
      const head = this.buf.slice(0, OVERFLOW_HEAD_CHARS);
      this.buf = '';
      this.skipping = true;
      this.onOverflow(head);
    }
  }
}
