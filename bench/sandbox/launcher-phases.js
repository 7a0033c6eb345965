#!/usr/bin/env node
'use strict';
// The launcher's start (bin/brainstem-sandbox.js, then src/sandbox-launcher.ts), step by step in the same
// order and from the same modules (the build when current, else the source through swc, as the entry chooses), each
// step timed. bench/sandbox.bench.ts runs it as the service runs the launcher: `node` with this file and the worker's
// command line, the session's policy in BRAINSTEM_SANDBOX_POLICY. One JSON line of epoch-ms marks goes to stderr.
const at = () => performance.timeOrigin + performance.now();
const marks = { origin: performance.timeOrigin, entered: at() };
const { spawn } = require('node:child_process');
const { existsSync, mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

async function main() {
  const root = join(__dirname, '..', '..');
  const fromBuild = !existsSync(join(root, 'src')) || require('../../scripts/build-state').isBuildCurrent();
  marks.build_checked = at();
  if (!fromBuild) {
    require('@swc-node/register');
    marks.swc_registered = at();
  }
  const base = fromBuild ? join(root, 'dist', 'src') : join(root, 'src');
  const ext = fromBuild ? '.js' : '.ts';
  const launch = require(join(base, 'sandbox', `sandbox-launch${ext}`));
  require(join(base, 'sessions', 'runtimes', `process-runner${ext}`));
  marks.own_modules = at();
  const { SandboxManager } = require('@anthropic-ai/sandbox-runtime');
  marks.srt_required = at();
  const policy = launch.parsePolicy(process.env[launch.POLICY_ENV]);
  for (const dir of policy.make_dirs) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const envFile = join(policy.tmp_dir, '.brainstem-env');
  writeFileSync(envFile, '', { mode: 0o600 });
  await SandboxManager.initialize(launch.launcherSettings(policy), () => Promise.resolve(false));
  marks.initialized = at();
  const [command, ...args] = process.argv.slice(2);
  // A line from the shell inside bubblewrap before the launcher's inner script: where bwrap's part ends.
  const inner = `printf 'inner-shell\\n'\n${launch.innerScript(policy, envFile, command, args)}`;
  const wrapped = await SandboxManager.wrapWithSandboxArgv(inner, undefined, undefined, undefined, process.cwd());
  marks.wrapped = at();
  const env = launch.withShellLevel({ ...wrapped.env, ...process.env });
  const child = spawn(wrapped.argv[0], wrapped.argv.slice(1), { env, stdio: ['inherit', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    const now = at();
    out += chunk;
    if (marks.inner_shell === undefined && out.includes('inner-shell\n')) marks.inner_shell = now;
    if (marks.worker_output === undefined && out.replace('inner-shell\n', '').length > 0) marks.worker_output = now;
  });
  await new Promise((resolve) => child.once('exit', resolve));
  SandboxManager.cleanupAfterCommand();
  await SandboxManager.reset();
  process.stderr.write(`${JSON.stringify({ from: fromBuild ? 'build' : 'source', marks })}\n`);
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`launcher phases: ${e.message}\n`);
    process.exit(126);
  },
);
