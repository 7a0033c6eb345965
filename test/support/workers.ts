import { resolve } from 'node:path';

export const WORKERS = resolve(__dirname, '../fixtures/workers');
export const FAKE_BIN = resolve(__dirname, '../fixtures/bin');

/** Tracks worker pids a test started and kills their process groups, even when the test failed. */
export class WorkerReaper {
  private readonly pids = new Set<number>();

  track(pid: number | null | undefined): void {
    if (typeof pid === 'number') this.pids.add(pid);
  }

  killAll(): void {
    for (const pid of this.pids) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    this.pids.clear();
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
