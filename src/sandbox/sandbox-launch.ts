import type { SandboxRuntimeConfig } from '@anthropic-ai/sandbox-runtime';
import { join } from 'node:path';
import { packageRoot } from '../common/package-root';
import { SandboxPolicy } from './sandbox-policy';

/** The variable that hands the launcher its session's policy (removed before the worker starts). */
export const POLICY_ENV = 'BRAINSTEM_SANDBOX_POLICY';

/**
 * The launcher's entry: beside this file when the service runs from its build (no check of the build per start), else
 * bin/brainstem-sandbox.js (the service runs from source: the build if it is current, else the source through swc).
 */
export const LAUNCHER_PATH = __filename.endsWith('.js') ? join(__dirname, '..', 'sandbox-launcher.js') : join(packageRoot(), 'bin', 'brainstem-sandbox.js');

/** How the service starts a sandboxed worker: the launcher, with the worker's command line after it. */
export function launcherSpawn(
  spec: { command: string; args: string[]; env: Record<string, string> },
  policy: SandboxPolicy,
  node: string = process.execPath,
): { command: string; args: string[]; env: Record<string, string> } {
  return { command: node, args: [LAUNCHER_PATH, spec.command, ...spec.args], env: { ...spec.env, [POLICY_ENV]: JSON.stringify(policy) } };
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** The policy the service handed over; a launcher started without a whole one refuses to run anything. */
export function parsePolicy(text: string | undefined): SandboxPolicy {
  if (!text) throw new Error(`${POLICY_ENV} is not set: the launcher runs only as the service starts it`);
  const p = JSON.parse(text) as Partial<SandboxPolicy> & { network?: { allow?: unknown; deny?: unknown } };
  const lists = [p.allow_write, p.deny_write, p.deny_read, p.allow_read, p.network?.allow, p.network?.deny];
  const ports = p.loopback_ports;
  if (!lists.every(isStrings) || typeof p.tmp_dir !== 'string' || !Array.isArray(ports) || !ports.every((n) => Number.isInteger(n) && n > 0 && n < 65536)) {
    throw new Error(`${POLICY_ENV} is not a sandbox policy`);
  }
  const policy = p as SandboxPolicy;
  return { ...policy, make_dirs: [policy.tmp_dir, ...(isStrings(policy.make_dirs) ? policy.make_dirs : [])] };
}

/** srt's configuration for one worker. */
export function launcherSettings(policy: SandboxPolicy): SandboxRuntimeConfig {
  return {
    network: { allowedDomains: [...policy.network.allow], deniedDomains: [...policy.network.deny] },
    filesystem: { denyRead: [...policy.deny_read], allowRead: [...policy.allow_read], allowWrite: [...policy.allow_write], denyWrite: [...policy.deny_write] },
  };
}

/** The names srt protects in a writable cwd with a mount when they are missing (its mandatory denies). */
export const SRT_MOUNT_NAMES: readonly string[] = ['.bashrc', '.bash_profile', '.zshrc', '.zprofile', '.profile', '.gitconfig', '.gitmodules', '.ripgreprc', '.mcp.json', '.vscode', '.idea'];

/**
 * The environment srt's bash starts with, as the launcher gives it. Debian's bash reads ~/.bashrc when its stdin is a
 * socket (as under sshd) and SHLVL is unset: a worker's stdin is the service's socket pair, and a service started
 * without a shell (systemd, a test) passes no SHLVL, so the user's ~/.bashrc ran inside the sandbox before every
 * worker (its exports in the worker's environment, its errors on the worker's stderr, 100 ms and more of the start).
 * SHLVL 1 tells bash a shell already started; the worker's own command still starts as the service asked.
 */
export function withShellLevel(env: Record<string, string>): Record<string, string> {
  return Number(env.SHLVL) >= 1 ? env : { ...env, SHLVL: '1' };
}

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * What runs inside the sandbox before the worker: its session id and credential from the file the launcher left (then
 * gone), its own TMPDIR, and Brainstem's port forwarded through srt's proxy (the sandbox has a loopback of its own, so
 * BRAINSTEM_URL would reach nothing there), ready before the worker starts.
 */
export function innerScript(policy: SandboxPolicy, envFile: string, command: string, args: readonly string[]): string {
  const excludes = `${policy.tmp_dir}/.git-excludes`;
  const lines = [
    // Descriptors the service's process left open without close-on-exec (its journal's files among them) go no further.
    'for __fd in /proc/self/fd/*; do __n="${__fd##*/}"; [ "$__n" -gt 2 ] 2>/dev/null && eval "exec $__n>&-" 2>/dev/null; done; unset __fd __n',
    `. ${shellQuote(envFile)}`,
    `rm -f ${shellQuote(envFile)}`,
    `export TMPDIR=${shellQuote(policy.tmp_dir)}`,
    // srt covers protected names that do not exist with empty mounts while the worker runs; git would list them as
    // untracked and `git add -A` would fail on them. Ignored here (besides the user's own global excludes).
    `{ cat "$(git config --type=path --get core.excludesFile 2>/dev/null || echo "$HOME/.config/git/ignore")" 2>/dev/null; printf '%s\\n' ${SRT_MOUNT_NAMES.map((n) => shellQuote(`/${n}`)).join(' ')}; } > ${shellQuote(excludes)}`,
    `export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.excludesFile GIT_CONFIG_VALUE_0=${shellQuote(excludes)}`,
  ];
  const ports = policy.loopback_ports;
  if (ports.length > 0) {
    const listening = ports.map((port) => `:${port.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A`);
    lines.push(
      // The proxy's credential is in HTTP_PROXY (user:token, URL-encoded); socat takes it decoded.
      `__auth="\${HTTP_PROXY#*://}"; __auth="\${__auth%@*}"; __auth="$(printf '%b' "\${__auth//%/\\\\x}")"; __pport="\${HTTP_PROXY##*:}"; __pport="\${__pport%/}"`,
      ...ports.map(
        (port) =>
          `socat TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr "PROXY:localhost:127.0.0.1:${port},proxyport=$__pport,proxyauth=$__auth" </dev/null >/dev/null 2>&1 &`,
      ),
      // Every forward listens before the worker starts (a worker's first call to the service must not be refused).
      `for __i in $(seq 1 500); do __ok=1; for __l in ${listening.map(shellQuote).join(' ')}; do grep -q "$__l" /proc/net/tcp 2>/dev/null || __ok=0; done; [ $__ok = 1 ] && break; sleep 0.01; done`,
      'unset __auth __pport __i __ok __l',
    );
  }
  lines.push(`exec ${[command, ...args].map(shellQuote).join(' ')}`);
  return lines.join('\n');
}
