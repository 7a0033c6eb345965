import { readFileSync } from 'node:fs';
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

/** Running (a zombie whose parent died with the service counts as gone, as it does for the service). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
