import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

import type { SandboxMode } from '../config/config.schema';

/** The Debian packages srt runs workers with on Linux, by the executable each provides. */
export const SANDBOX_TOOLS: readonly { executable: string; debian: string }[] = [
  { executable: 'bwrap', debian: 'bubblewrap' },
  { executable: 'socat', debian: 'socat' },
  { executable: 'rg', debian: 'ripgrep' },
];

export interface SandboxAvailability {
  /** Whether workers can be sandboxed on this machine. */
  available: boolean;
  /** The executables not found on PATH (bwrap, socat, rg). */
  missing: string[];
  /** Why not, for people: what is missing and how to install it; null when available. */
  reason: string | null;
}

function onPath(executable: string, path: string): boolean {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, executable), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/** What the machine lacks for sandboxing, read from PATH (and the platform: srt's Linux backend is the one used). */
export function sandboxAvailability(platform: string = process.platform, path: string = process.env.PATH ?? ''): SandboxAvailability {
  if (platform !== 'linux') return { available: false, missing: [], reason: `sandboxing runs on Linux (bubblewrap); this is ${platform}` };
  const absent = SANDBOX_TOOLS.filter((t) => !onPath(t.executable, path));
  if (absent.length === 0) return { available: true, missing: [], reason: null };
  return {
    available: false,
    missing: absent.map((t) => t.executable),
    reason: `${absent.map((t) => t.executable).join(', ')} not found on PATH (install Debian's ${absent.map((t) => t.debian).join(' ')})`,
  };
}

/** What GET /api/v1/ready says of the sandbox: the mode, whether workers started now are sandboxed, and why not. */
export interface SandboxReadiness {
  mode: SandboxMode;
  /** Whether a worker started now runs sandboxed (with `required`, false means sessions are refused). */
  workers_sandboxed: boolean;
  missing: string[];
  reason: string | null;
}

export function sandboxReadiness(mode: SandboxMode, availability: SandboxAvailability): SandboxReadiness {
  if (mode === 'off') return { mode, workers_sandboxed: false, missing: [], reason: 'BRAINSTEM_SANDBOX is off' };
  return { mode, workers_sandboxed: availability.available, missing: availability.missing, reason: availability.reason };
}

/** The start-up line about the sandbox, when there is something to say: workers run unsandboxed, or are refused. */
export function sandboxStartupLine(r: SandboxReadiness): { level: 'warn' | 'log'; text: string } {
  if (r.mode === 'off') return { level: 'warn', text: 'BRAINSTEM_SANDBOX=off: workers run with your full rights (your files, your network, this service\'s data directory)' };
  if (r.workers_sandboxed) return { level: 'log', text: `workers run sandboxed (BRAINSTEM_SANDBOX=${r.mode})` };
  if (r.mode === 'required') return { level: 'warn', text: `BRAINSTEM_SANDBOX=required and ${r.reason}: every new session is refused until it is installed` };
  return { level: 'warn', text: `workers run UNSANDBOXED: ${r.reason}; BRAINSTEM_SANDBOX=required refuses them instead` };
}
