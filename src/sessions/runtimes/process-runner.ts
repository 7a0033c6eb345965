import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { launcherSpawn } from '../../sandbox/sandbox-launch';
import type { SandboxPolicy } from '../../sandbox/sandbox-policy';

export interface SpawnSpec {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Run inside the OS sandbox under this policy (through its launcher, src/sandbox-launcher.ts); absent: as is. */
  sandbox?: SandboxPolicy | null;
}

/** A worker process the service started and holds the pipes of. */
export interface WorkerProcess {
  readonly pid: number | null;
  /** Field 22 of /proc/<pid>/stat, read right after spawn: identifies this process across pid reuse. */
  readonly startTime: string | null;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Called once: the exit status, or a spawn error (code null, signal null, error set). */
  onExit(listener: (code: number | null, signal: string | null, error: Error | null) => void): void;
}

/** The port for every process side effect of the sessions module. */
export interface ProcessRunner {
  /** Spawns detached in its own process group, so a service restart does not take it down. */
  spawn(spec: SpawnSpec): WorkerProcess;
  startTime(pid: number): string | null;
  /** Alive and still the same process (start time matches). */
  isAlive(pid: number, startTime: string | null): boolean;
  /** Signals the worker's whole process group; false if it is already gone. */
  signalGroup(pid: number, signal: NodeJS.Signals): boolean;
  /**
   * Signals every other process of this user whose environment holds `name=value` (its group too, when it
   * leads one), except members of `exceptGroup` (signalled as a group already): a worker's descendants keep
   * its environment wherever they moved. Returns the pids signalled.
   */
  signalByEnv(name: string, value: string, signal: NodeJS.Signals, exceptGroup?: number): number[];
}

export const PROCESS_RUNNER = Symbol('ProcessRunner');

/** Where process tracking works: it reads /proc (start times, process groups, environments). */
export const SUPPORTED_PLATFORMS: readonly string[] = ['linux'];

/**
 * Why the service cannot run on this platform, or null. Elsewhere /proc reads find nothing, so a worker that outlived
 * a restart would look gone and be started a second time: refused rather than run half blind.
 */
export function unsupportedPlatform(platform: string): string | null {
  if (SUPPORTED_PLATFORMS.includes(platform)) return null;
  return `unsupported platform ${platform}: Brainstem tracks worker processes through /proc, which ${SUPPORTED_PLATFORMS.join(', ')} has and ${platform} has not; run it on ${SUPPORTED_PLATFORMS.join(' or ')}`;
}

/** /proc/<pid>/stat after the comm field, which may contain spaces and parentheses: fields[0] is field 3 (state). */
function procStatFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

export function procStartTime(pid: number): string | null {
  const fields = procStatFields(pid);
  // Field 22 (starttime) is fields[19]. A zombie is not alive.
  return !fields || fields[0] === 'Z' ? null : (fields[19] ?? null);
}

/** Field 5, the process group. */
function procGroup(pid: number): number | null {
  const fields = procStatFields(pid);
  return fields ? Number(fields[2]) : null;
}

export class NodeProcessRunner implements ProcessRunner {
  spawn(spec: SpawnSpec): WorkerProcess {
    const run = spec.sandbox ? launcherSpawn(spec, spec.sandbox) : spec;
    const child = spawn(run.command, run.args, { cwd: spec.cwd, env: run.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const pid = child.pid ?? null;
    const startTime = pid === null ? null : procStartTime(pid);
    // Broken pipes (a worker that exited or closed stdin) surface as exit, not as crashes of the service.
    child.stdin.on('error', () => undefined);
    return {
      pid,
      startTime,
      stdin: child.stdin,
      stdout: child.stdout,
      stderr: child.stderr,
      onExit(listener) {
        let done = false;
        const once = (code: number | null, signal: string | null, error: Error | null) => {
          if (done) return;
          done = true;
          listener(code, signal, error);
        };
        child.once('error', (e) => once(null, null, e));
        child.once('exit', (code, signal) => once(code, signal, null));
      },
    };
  }

  startTime(pid: number): string | null {
    return procStartTime(pid);
  }

  isAlive(pid: number, startTime: string | null): boolean {
    const now = procStartTime(pid);
    return now !== null && (startTime === null || now === startTime);
  }

  signalGroup(pid: number, signal: NodeJS.Signals): boolean {
    try {
      process.kill(-pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  signalByEnv(name: string, value: string, signal: NodeJS.Signals, exceptGroup?: number): number[] {
    const entry = Buffer.from(`${name}=${value}\0`);
    const signalled: number[] = [];
    for (const pid of procPids()) {
      if (pid === process.pid || !holdsEntry(pid, entry) || (exceptGroup !== undefined && procGroup(pid) === exceptGroup)) continue;
      if (this.signalGroup(pid, signal) || signalOne(pid, signal)) signalled.push(pid);
    }
    return signalled;
  }
}

function procPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

/** /proc/<pid>/environ is NUL-separated `NAME=value` entries; another user's, or a gone process's, reads as not holding it. */
function holdsEntry(pid: number, entry: Buffer): boolean {
  let env: Buffer;
  try {
    env = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return false;
  }
  for (let at = env.indexOf(entry); at >= 0; at = env.indexOf(entry, at + 1)) if (at === 0 || env[at - 1] === 0) return true;
  return false;
}

function signalOne(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}
