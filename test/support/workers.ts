import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from './temp-dir';
import { waitFor } from './wait-for';

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

/** The HOME in a process's environment; null when it cannot be read (gone, or another user's). */
function homeOf(pid: number): string | null {
  try {
    const entry = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((kv) => kv.startsWith('HOME='));
    return entry === undefined ? null : entry.slice('HOME='.length);
  } catch {
    return null;
  }
}

/**
 * Kills every process running with `home` as its HOME, and waits until they are gone. A CLI writes its state there
 * until it exits (a session's claude, a brain the service started for a round, a `claude doctor` under script(1), and
 * whatever they started, which inherit that HOME): stopped first, none of them adds files while the directory is removed.
 */
export async function stopProcessesOfHome(home: string): Promise<void> {
  const users = () =>
    readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number)
      .filter((pid) => pid !== process.pid && homeOf(pid) === home && isAlive(pid));
  for (const pid of users()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await waitFor(() => users().length === 0, { what: `the processes with HOME=${home} to exit` });
}

/**
 * Per-session home directories for the fake per-turn agents (codex, gemini), which record there one pid per
 * turn process: each test's turns are killed and its homes removed afterwards, whatever the test's outcome.
 */
export class AgentHomes {
  private readonly homes: Array<ReturnType<typeof tempDir>> = [];

  create(prefix: string): string {
    const home = tempDir(prefix);
    this.homes.push(home);
    return home.path;
  }

  /** The pids the fake recorded in `home`, one per turn. */
  static pids(home: string): number[] {
    const file = join(home, 'pids');
    return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').map(Number) : [];
  }

  cleanUp(): void {
    for (const home of this.homes.splice(0)) {
      for (const pid of AgentHomes.pids(home.path)) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      home.remove();
    }
  }
}
