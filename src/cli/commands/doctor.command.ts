import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { AGENT_RUNTIMES } from '../../common/agent-runtimes';
import { findExecutable } from '../../common/executable';
import { ConfigError, loadConfig } from '../../config/config.loader';
import type { SandboxMode } from '../../config/config.schema';
import { SandboxAvailability, sandboxAvailability } from '../../sandbox/sandbox-availability';
import { parseVersion, versionWarning } from '../../sessions/runtimes/runtime-versions';
import { CliContext, EXIT, parseCommand } from '../cli-context';
import { columns } from '../terminal-text';
import { Command, printJson, usageError, usageOf } from './command';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of `brainstem doctor`: `fail` only for what the configuration requires. */
export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  detail: string;
}

/**
 * What srt's sandbox needs beyond its executables, tried for real: a user namespace (srt always makes one), a PID
 * namespace and a fresh /proc. A machine that refuses user namespaces (a container, Ubuntu's AppArmor restriction,
 * or inside another sandbox) fails here though bwrap is installed.
 */
export const BWRAP_PROBE = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--unshare-user', 'true'];

/** How long a probe gets (a node CLI loading cold on a busy machine is slow). */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * The sandboxing line. `refusal`: what bubblewrap said when the probe failed, null when it ran (or was not tried,
 * when something is missing). Pure.
 */
export function sandboxCheck(mode: SandboxMode, availability: SandboxAvailability, refusal: string | null): DoctorCheck {
  const why = availability.reason ?? (refusal === null ? null : `bubblewrap cannot make a sandbox here: ${refusal}`);
  const name = 'sandbox';
  if (why === null) {
    if (mode === 'off') return { name, status: 'warn', detail: 'works here, but BRAINSTEM_SANDBOX is off: workers run unsandboxed' };
    return { name, status: 'ok', detail: `works here (bubblewrap, socat, ripgrep; BRAINSTEM_SANDBOX=${mode})` };
  }
  if (mode === 'required') return { name, status: 'fail', detail: `does not work here, and BRAINSTEM_SANDBOX=required refuses every session: ${why}` };
  if (mode === 'auto') return { name, status: 'warn', detail: `does not work here, so workers run unsandboxed: ${why}` };
  return { name, status: 'ok', detail: `off (BRAINSTEM_SANDBOX=off); it would not work here: ${why}` };
}

/** An agent runtime's line from what `<exe> --version` printed (null: nothing in time). Never a failure: none is required. Pure. */
export function runtimeCheck(runtime: string, path: string | null, output: string | null): DoctorCheck {
  if (path === null) return { name: runtime, status: 'ok', detail: 'not on PATH' };
  const warning = versionWarning(runtime, output);
  const version = output === null ? null : parseVersion(output);
  if (warning) return { name: runtime, status: 'warn', detail: `${warning} (${path})` };
  return { name: runtime, status: 'ok', detail: `${version ?? 'found'} (${path})` };
}

export function doctorLines(checks: readonly DoctorCheck[]): string[] {
  return columns(checks.map((c) => [c.status, c.name, c.detail]));
}

/** A command's exit and what it printed (stdout then stderr); a spawn error reads as its message. */
function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ ok: boolean; printed: string }> {
  return new Promise((resolve) =>
    execFile(command, [...args], { env, timeout: PROBE_TIMEOUT_MS, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      const printed = `${stdout}${stderr}`.trim() || (error ? error.message : '');
      resolve({ ok: error === null, printed });
    }),
  );
}

async function sandboxProbe(mode: SandboxMode, env: NodeJS.ProcessEnv, cwd: string): Promise<DoctorCheck> {
  const availability = sandboxAvailability(process.platform, env.PATH ?? '');
  let refusal: string | null = null;
  const bwrap = availability.available ? findExecutable('bwrap', env.PATH ?? '', cwd) : null;
  if (bwrap) {
    const r = await run(bwrap, BWRAP_PROBE, env);
    if (!r.ok) refusal = JSON.stringify(r.printed.split('\n')[0]);
  }
  return sandboxCheck(mode, availability, refusal);
}

/** The data directory (journal, tokens) writable, or, before the first start, the folder it would be made in. */
function dataDirCheck(dir: string): DoctorCheck {
  let at = dir;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    accessSync(at, constants.W_OK);
    return { name: 'data dir', status: 'ok', detail: at === dir ? `${dir} is writable` : `${dir} can be made (in ${at})` };
  } catch {
    return { name: 'data dir', status: 'fail', detail: `${dir} is not writable${at === dir ? '' : ` (nor ${at}, where it would be made)`}` };
  }
}

async function runtimeChecks(env: NodeJS.ProcessEnv, cwd: string): Promise<DoctorCheck[]> {
  return Promise.all(
    AGENT_RUNTIMES.map(async ({ name, executable }) => {
      const path = findExecutable(executable, env.PATH ?? '', cwd);
      if (path === null) return runtimeCheck(name, null, null);
      const r = await run(path, ['--version'], env);
      return runtimeCheck(name, path, r.printed === '' ? null : r.printed);
    }),
  );
}

const SYNOPSIS = '[--json]';
const SUMMARY = 'check this machine, offline: sandboxing, the agent runtimes on PATH, the data directory';
const USAGE = `${usageOf({ name: 'doctor', synopsis: SYNOPSIS })}\n  ${SUMMARY}`;

/** `brainstem doctor`: one line per check, exit 1 when a check the configuration requires fails. Needs no service. */
export const doctorCommand: Command = {
  name: 'doctor',
  synopsis: SYNOPSIS,
  summary: SUMMARY,
  run: async (args: readonly string[], ctx: CliContext) => {
    const p = parseCommand(args, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, { min: 0, max: 0 });
    if ('error' in p) return usageError(ctx, 'doctor', p.error, USAGE);
    if (p.values.help) {
      ctx.io.out(`usage: ${USAGE}`);
      return EXIT.ok;
    }
    let config;
    try {
      config = loadConfig(ctx.env, []);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      ctx.io.err(`brainstem doctor: the configuration is invalid: ${e.message}`);
      return EXIT.failed;
    }
    const [sandbox, runtimes] = await Promise.all([sandboxProbe(config.sandbox.mode, ctx.env, ctx.cwd), runtimeChecks(ctx.env, ctx.cwd)]);
    const checks = [sandbox, dataDirCheck(config.journal.dir), ...runtimes];
    if (p.values.json) printJson(ctx, checks);
    else doctorLines(checks).forEach((l) => ctx.io.out(l));
    return checks.some((c) => c.status === 'fail') ? EXIT.failed : EXIT.ok;
  },
};
