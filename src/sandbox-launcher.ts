/**
 * The process between the service and one sandboxed worker (docs/operations/security.md): it runs srt's proxies with
 * the session's policy, starts the worker inside bubblewrap, asks the service about hosts no rule decides, and ends
 * with the worker's exit status. It runs outside the sandbox as the worker's process for the service (its pid, its
 * group); the worker's pipes pass straight through (stdio inherited). One per worker, so every ask names its session.
 * A program of its own, like main.ts, so it sits at the root: it puts srt, the policy and the process table together.
 */
import { SandboxManager } from '@anthropic-ai/sandbox-runtime';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeProcessRunner } from './sessions/runtimes/process-runner';
import { SESSION_ENV, TOKEN_ENV } from './common/worker-env';
import { POLICY_ENV, innerScript, launcherSettings, parsePolicy, shellQuote, withShellLevel } from './sandbox/sandbox-launch';

/** The signals a worker gets through its launcher (SIGKILL cannot be caught: the service sends it by the session id too). */
const FORWARDED = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Marks the denials that came from the service's answer (journaled there), so they are not reported twice. */
const ANSWER_MARK = 'brainstem:';

async function ask(host: string, port: number): Promise<boolean | { allow: false; reason: string }> {
  const url = process.env.BRAINSTEM_URL;
  const id = process.env[SESSION_ENV];
  const token = process.env[TOKEN_ENV];
  if (!url || !id || !token) return { allow: false, reason: `${ANSWER_MARK} no way to ask the service` };
  try {
    const res = await fetch(`${url}/api/v1/coding-sessions/${encodeURIComponent(id)}/network-asks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ host, port }),
    });
    const body = (await res.json()) as { allow?: unknown; reason?: unknown; message?: unknown };
    if (res.ok && body.allow === true) return true;
    const reason = typeof body.reason === 'string' ? body.reason : typeof body.message === 'string' ? body.message : `refused (${res.status})`;
    return { allow: false, reason: `${ANSWER_MARK} ${reason}` };
  } catch (e) {
    return { allow: false, reason: `${ANSWER_MARK} the service did not answer (${(e as Error).message})` };
  }
}

/** Connections srt refused by itself (a deny rule, a resolved address): the service journals them. */
function reportRefusal(line: string): void {
  const m = /^deny network-outbound (.+):(\d+) \((.*)\)$/.exec(line);
  const url = process.env.BRAINSTEM_URL;
  const id = process.env[SESSION_ENV];
  const token = process.env[TOKEN_ENV];
  if (!m || m[3].includes(ANSWER_MARK) || !url || !id || !token) return;
  void fetch(`${url}/api/v1/coding-sessions/${encodeURIComponent(id)}/network-refusals`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ host: m[1], port: Number(m[2]), reason: m[3] }),
  }).catch(() => undefined);
}

async function main(): Promise<number> {
  const policy = parsePolicy(process.env[POLICY_ENV]);
  delete process.env[POLICY_ENV];
  const [command, ...args] = process.argv.slice(2);
  if (!command) throw new Error('usage: sandbox-launcher <command> [args…]');
  const sessionId = process.env[SESSION_ENV] ?? '';
  for (const dir of policy.make_dirs) mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The worker's session id and credential reach it through a file in its own temp dir, not the environment of
  // bash and bwrap: the service signals every process holding the session id, and a signalled bwrap would take the
  // worker down at once (its children die with it) instead of letting it end on SIGTERM.
  const carried = [SESSION_ENV, TOKEN_ENV].filter((k) => process.env[k] !== undefined);
  const envFile = join(policy.tmp_dir, '.brainstem-env');
  writeFileSync(envFile, carried.map((k) => `export ${k}=${shellQuote(process.env[k] ?? '')}\n`).join(''), { mode: 0o600 });
  const outerEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !carried.includes(k)) outerEnv[k] = v;

  await SandboxManager.initialize(launcherSettings(policy), ({ host, port }) => ask(host, port ?? 0));
  SandboxManager.getSandboxViolationStore().subscribe((all) => {
    const last = all[all.length - 1];
    if (last) reportRefusal(last.line);
  });
  const wrapped = await SandboxManager.wrapWithSandboxArgv(innerScript(policy, envFile, command, args), undefined, undefined, undefined, process.cwd());
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(wrapped.env)) if (v !== undefined && !carried.includes(k)) env[k] = v;
  Object.assign(env, outerEnv);
  const child = spawn(wrapped.argv[0], wrapped.argv.slice(1), { env: withShellLevel(env), stdio: 'inherit', detached: true });
  const runner = new NodeProcessRunner();
  // A signal to the worker's group reaches this process only (bwrap runs in a group of its own): it is passed to the
  // worker's own processes inside, which end as they would unsandboxed.
  for (const sig of FORWARDED) process.on(sig, () => runner.signalByEnv(SESSION_ENV, sessionId, sig));
  const status = await new Promise<number>((resolve) => {
    child.once('error', () => resolve(127));
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 + signalNumber(signal) : 1)));
  });
  SandboxManager.cleanupAfterCommand();
  // Connections the worker left open would keep the proxies' close waiting: the process exit ends them.
  void SandboxManager.reset().catch(() => undefined);
  return status;
}

/**
 * bubblewrap reports a worker ended by a signal as 128 + its number: the launcher ends by the same signal, so the service
 * records the signal as it would unsandboxed.
 */
function exitLike(status: number): void {
  const signal = SIGNALS_BY_NUMBER[status - 128];
  if (signal) {
    for (const s of FORWARDED) process.removeAllListeners(s);
    process.kill(process.pid, signal);
  }
  process.exit(status);
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };
const SIGNALS_BY_NUMBER: Partial<Record<number, NodeJS.Signals>> = Object.fromEntries(Object.entries(SIGNAL_NUMBERS).map(([s, n]) => [n, s as NodeJS.Signals]));

function signalNumber(signal: NodeJS.Signals): number {
  return SIGNAL_NUMBERS[signal] ?? 1;
}

main().then(
  (code) => exitLike(code),
  (e: unknown) => {
    process.stderr.write(`brainstem sandbox: ${(e as Error).message}\n`);
    process.exit(126);
  },
);
