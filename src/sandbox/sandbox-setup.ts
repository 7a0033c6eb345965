import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxMode } from '../config/config.schema';
import { SandboxAvailability } from './sandbox-availability';
import { PolicyProfileSandbox, SandboxFact } from './sandbox-policy';

/** The runtimes whose workers run sandboxed: every one Brainstem starts (its own hook and brain processes are not workers). */
export const SANDBOXED_RUNTIMES: readonly string[] = ['claude-code', 'codex', 'gemini-cli', 'opencode', 'command'];

/** What the service knows of itself that every session's policy is made from. */
export interface SandboxHost {
  mode: SandboxMode;
  availability: SandboxAvailability;
  data_dir: string;
  profiles_dir: string;
  worktrees_dir: string;
  session_config_dir(sessionId: string): string;
  /** BRAINSTEM_URL as workers get it (known once the service listens). */
  service_url(): string;
  home: string;
  tmp_root: string;
}

/** Whether a create's worker is sandboxed and, if so, the facts of its policy (src/sandbox/sandbox-policy.ts). */
export class SandboxSetup {
  constructor(private readonly host: SandboxHost) {}

  get mode(): SandboxMode {
    return this.host.mode;
  }

  get availability(): SandboxAvailability {
    return this.host.availability;
  }

  /** Whether a worker of this runtime started now runs sandboxed. */
  sandboxes(runtime: string): boolean {
    return this.host.mode !== 'off' && this.host.availability.available && SANDBOXED_RUNTIMES.includes(runtime);
  }

  async fact(sessionId: string, runtime: string, cwd: string, env: Readonly<Record<string, string>>, profile: PolicyProfileSandbox | null): Promise<SandboxFact> {
    const h = this.host;
    const required = h.mode === 'required';
    if (h.mode === 'off') return { on: false, reason: 'BRAINSTEM_SANDBOX is off', required: false };
    if (!SANDBOXED_RUNTIMES.includes(runtime)) return { on: false, reason: `runtime ${runtime} is not sandboxed`, required };
    if (!h.availability.available) return { on: false, reason: h.availability.reason ?? 'sandboxing is not available here', required };
    return {
      on: true,
      facts: {
        session_id: sessionId,
        runtime,
        home: env.HOME || h.home,
        service_home: h.home,
        env,
        data_dir: h.data_dir,
        profiles_dir: h.profiles_dir,
        worktrees_dir: h.worktrees_dir,
        session_config_dir: h.session_config_dir(sessionId),
        service_url: h.service_url(),
        tmp_root: h.tmp_root,
        data_dir_entries: await readdir(h.data_dir).catch(() => []),
        profile,
        config_urls: await configUrls(runtime, h.home, env, cwd),
      },
    };
  }
}

/** The configuration files a runtime reads its model provider's URL from. */
function configFiles(runtime: string, home: string, env: Readonly<Record<string, string>>, cwd: string): string[] {
  if (runtime === 'codex') return [join(env.CODEX_HOME ?? join(home, '.codex'), 'config.toml'), join(cwd, '.codex', 'config.toml')];
  if (runtime === 'opencode') {
    const dir = join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'opencode');
    return [...(env.OPENCODE_CONFIG ? [env.OPENCODE_CONFIG] : []), join(dir, 'opencode.json'), join(dir, 'opencode.jsonc'), join(cwd, 'opencode.json'), join(cwd, 'opencode.jsonc')];
  }
  return [];
}

/** `base_url = "…"` (TOML) and `"baseURL": "…"` (JSON) in the runtime's configuration: the hosts its model API is at. */
const PROVIDER_URL = /(?:base_url|baseURL)"?\s*[=:]\s*"(https?:\/\/[^"\s]+)"/g;

async function configUrls(runtime: string, home: string, env: Readonly<Record<string, string>>, cwd: string): Promise<string[]> {
  const texts = await Promise.all(configFiles(runtime, home, env, cwd).map((f) => readFile(f, 'utf8').catch(() => '')));
  return texts.flatMap((t) => [...t.matchAll(PROVIDER_URL)].map((m) => m[1]));
}
