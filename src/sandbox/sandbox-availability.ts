import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** BRAINSTEM_SANDBOX: `auto` sandboxes where the machine can, `required` refuses a session it cannot sandbox, `off` never sandboxes. */
export type SandboxMode = 'auto' | 'required' | 'off';
export const SANDBOX_MODES: readonly SandboxMode[] = ['auto', 'required', 'off'];

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
