// npm run bench:sandbox [-- --runs N] — what srt's sandbox (src/sandbox/) costs a worker, beside the same worker
// unsandboxed in the same run (issue 49's Bench; bench/README.md, The OS sandbox):
// - create → the worker's first output byte, through two real service processes run from the build, one with
//   BRAINSTEM_SANDBOX=auto and one with off, interleaved;
// - a CPU-bound worker's run time (its own clock), through the same two services, interleaved;
// - bytes per second from a loopback HTTP server in another process: curl direct, against curl inside the real
//   launcher (bin/brainstem-sandbox.js, started as the service starts it) through srt's proxy, with 127.0.0.1:<port>
//   in the policy's network allow list;
// - where the sandboxed start goes: bench/sandbox/launcher-phases.js, the launcher's steps timed one by one.
// Exits 2 when the machine cannot sandbox (bubblewrap, socat or ripgrep missing).
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { callApi } from './api-call';
import { percentile, sseTimes } from './sse-times';
import { launcherSpawn, withShellLevel } from '../src/sandbox/sandbox-launch';
import { sandboxAvailability } from '../src/sandbox/sandbox-availability';
import { SandboxPolicy, sandboxPolicy } from '../src/sandbox/sandbox-policy';
import { SessionStatus } from '../src/sessions/session.status';
import { ServiceProcess, startService } from '../test/support/service-process';
import { tempDir } from '../test/support/temp-dir';

const ROOT = resolve(__dirname, '..');
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = arg('runs', 30);
const CPU_RUNS = arg('cpu-runs', 7);
const NET_RUNS = arg('net-runs', 3);
const PHASE_RUNS = arg('phase-runs', 15);
const DOWNLOAD_MB = arg('mb', 200);
const MARKER = 'first-output-byte';
const PRINT_ONE_LINE = ['sh', '-c', `echo ${MARKER}`] as const;

type Mode = 'auto' | 'off';
const now = () => performance.timeOrigin + performance.now();
const median = (xs: number[]) => percentile(xs, 50);
const f = (x: number, digits = 1) => x.toFixed(digits);
const ms = (x: number) => `${f(x).padStart(7)} ms`;
const met = (ok: boolean) => (ok ? 'MET' : 'MISSED');

/** The service's create, then its output stream until the marker: the time from before the POST to that message. */
async function firstOutput(svc: ServiceProcess, cwd: string, title: string): Promise<{ ms: number; status: SessionStatus }> {
  const at = now();
  const status = await callApi<SessionStatus>(svc, 'POST', '/coding-sessions', 201, { title, runtime: 'command', command: PRINT_ONE_LINE[0], args: PRINT_ONE_LINE.slice(1), cwd });
  const sse = await sseTimes(`${svc.url}/api/v1/coding-sessions/${status.id}/output/stream?tail=1000`, svc.auth);
  try {
    for (let n = 1; ; n++) {
      await sse.next(n);
      if (sse.data[n - 1].includes(MARKER)) return { ms: sse.times[n - 1] + performance.timeOrigin - at, status };
    }
  } finally {
    sse.close();
  }
}

async function exited(svc: ServiceProcess, id: string): Promise<SessionStatus> {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    const s = await callApi<SessionStatus>(svc, 'GET', `/coding-sessions/${id}`, 200);
    if (s.state === 'exited') return s;
  }
  throw new Error(`session ${id} did not exit within 120 s`);
}

/** A node worker hashing `rounds` times; it prints the time the hashing took by its own clock, and its CPU time. */
function hashingScript(rounds: number): string {
  return `const c=require('node:crypto');const b=Buffer.alloc(1024,7);const t=process.hrtime.bigint();const u=process.cpuUsage();let h=b;for(let i=0;i<${rounds};i++)h=c.createHash('sha256').update(h).update(b).digest();const e=Number(process.hrtime.bigint()-t)/1e6;const cu=process.cpuUsage(u);console.log('hashed '+e.toFixed(1)+' '+((cu.user+cu.system)/1000).toFixed(1)+' '+h.toString('hex').slice(0,8));`;
}

/** Rounds of hashing that take about `targetMs` here, measured in this process. */
function calibrate(targetMs: number): number {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const crypto = require('node:crypto') as typeof import('node:crypto');
  const b = Buffer.alloc(1024, 7);
  const rounds = 100_000;
  let took = Infinity;
  // The best of three: the first is slower (the JIT), the others near what a fresh worker's steady state is.
  for (let pass = 0; pass < 3; pass++) {
    const t = performance.now();
    let h = b;
    for (let i = 0; i < rounds; i++) h = crypto.createHash('sha256').update(h).update(b).digest();
    took = Math.min(took, performance.now() - t);
  }
  return Math.round((rounds * targetMs) / took);
}

async function cpuRun(svc: ServiceProcess, cwd: string, rounds: number): Promise<{ wall: number; cpu: number }> {
  const s = await callApi<SessionStatus>(svc, 'POST', '/coding-sessions', 201, { title: 'cpu', runtime: 'command', command: process.execPath, args: ['-e', hashingScript(rounds)], cwd });
  await exited(svc, s.id);
  const out = await callApi<{ lines: string[] }>(svc, 'GET', `/coding-sessions/${s.id}/output?tail=20`, 200);
  const line = out.lines.find((l) => l.startsWith('hashed '));
  if (!line) throw new Error(`the CPU worker printed no result: ${out.lines.join('\n')}`);
  const [, wall, cpu] = line.split(' ');
  return { wall: Number(wall), cpu: Number(cpu) };
}

/** Runs a process to its end; its stdout, and the time from spawn to its first stdout byte. */
function run(command: string, args: readonly string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<{ out: string; err: string; firstByte: number; code: number | null }> {
  return new Promise((done, fail) => {
    const at = now();
    // stdin a socket pair, as the service gives a worker's (bash reads ~/.bashrc on one when SHLVL is unset).
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? (process.env as Record<string, string>), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let firstByte = NaN;
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      if (Number.isNaN(firstByte)) firstByte = now() - at;
      out += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.once('error', fail);
    child.once('close', (code) => done({ out, err, firstByte, code }));
  });
}

/** A loopback HTTP server in a process of its own, answering every GET with `mb` MB; resolves with its port. */
function loopbackServer(mb: number): Promise<{ port: number; child: ChildProcess }> {
  const script = `const b=Buffer.alloc(1<<20,120);require('node:http').createServer((q,r)=>{r.writeHead(200,{'content-length':${mb}*(1<<20)});let n=0;const w=()=>{while(n<${mb}){n++;if(!r.write(b))return r.once('drain',w)}r.end()};w()}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((done) => child.stdout!.setEncoding('utf8').once('data', (c: string) => done({ port: Number(c.trim()), child })));
}

const CURL_W = ['-s', '-o', '/dev/null', '-w', '%{size_download} %{speed_download}'];

function curlResult(r: { out: string; err: string; code: number | null }, mb: number, how: string): number {
  const [size, speed] = r.out.trim().split(' ').map(Number);
  if (r.code !== 0 || size !== mb * (1 << 20)) throw new Error(`${how}: curl exited ${r.code} with ${size} bytes: ${r.err.slice(-500)}`);
  return speed;
}

async function main(): Promise<void> {
  const availability = sandboxAvailability();
  if (!availability.available) {
    console.error(`sandbox bench: this machine cannot sandbox: ${availability.reason}`);
    process.exit(2);
  }
  // Run as installed: the service and the launcher from the build (a clone's `npm start`); built here when stale.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const buildState = require('../scripts/build-state') as { isBuildCurrent: () => boolean; build: () => void };
  if (!buildState.isBuildCurrent()) {
    const t = performance.now();
    buildState.build();
    console.log(`built dist/ (the sources were newer) in ${f((performance.now() - t) / 1000)} s`);
  }
  const version = (cmd: string, a: string[]) => execFileSync(cmd, a, { encoding: 'utf8' }).split('\n')[0].trim();
  console.log(
    `sandbox bench: ${version('bwrap', ['--version'])}, ${version('socat', ['-V']).replace(/^.*socat/, 'socat').slice(0, 40)}, srt ${(require('@anthropic-ai/sandbox-runtime/package.json') as { version: string }).version}, node ${process.version}, ${cpus().length} cores, load ${loadavg().map((x) => f(x, 2)).join(' ')}`,
  );

  const dir = tempDir('brainstem-bench-sandbox-');
  const cwd = join(dir.path, 'work');
  mkdirSync(cwd);
  const services = {} as Record<Mode, ServiceProcess>;
  for (const mode of ['auto', 'off'] as const) {
    services[mode] = await startService(
      { BRAINSTEM_JOURNAL_DIR: join(dir.path, `data-${mode}`), BRAINSTEM_PROFILES_DIR: join(dir.path, `profiles-${mode}`), BRAINSTEM_SANDBOX: mode, BRAINSTEM_MAX_SESSIONS: '10000' },
      [],
      'build',
    );
  }
  try {
    // 1. create → first output byte, interleaved (the order swapped every round), after one warm run each.
    const starts: Record<Mode, number[]> = { auto: [], off: [] };
    let policy: SandboxPolicy | null = null;
    for (let i = -1; i < RUNS; i++) {
      for (const mode of i % 2 === 0 ? (['auto', 'off'] as const) : (['off', 'auto'] as const)) {
        const r = await firstOutput(services[mode], cwd, `start ${mode} ${i}`);
        if (r.status.sandbox.on !== (mode === 'auto')) throw new Error(`BRAINSTEM_SANDBOX=${mode} started a worker with sandbox.on ${r.status.sandbox.on}: ${r.status.sandbox.reason}`);
        if (mode === 'auto') policy = r.status.sandbox.policy;
        if (i >= 0) starts[mode].push(r.ms);
      }
    }
    console.log(`\ncreate → first output byte (POST to the marker on GET …/output/stream), ${RUNS} runs each, interleaved; worker: ${PRINT_ONE_LINE.join(' ')}`);
    console.log(`${''.padEnd(22)}${'p50'.padStart(10)}${'p99'.padStart(11)}${'min'.padStart(11)}${'max'.padStart(11)}`);
    for (const mode of ['off', 'auto'] as const) {
      const xs = starts[mode];
      console.log(`${(mode === 'auto' ? 'sandboxed (auto)' : 'unsandboxed (off)').padEnd(22)}${ms(median(xs))} ${ms(percentile(xs, 99))} ${ms(Math.min(...xs))} ${ms(Math.max(...xs))}`);
    }
    const addP50 = median(starts.auto) - median(starts.off);
    const addP99 = percentile(starts.auto, 99) - percentile(starts.off, 99);
    console.log(`added by the sandbox    ${ms(addP50)} ${ms(addP99)}   (${f(median(starts.auto) / median(starts.off), 2)}× at p50)`);

    // 2. where a sandboxed start goes: the launcher's steps, under the policy of a real session of the auto service.
    if (!policy) throw new Error('no sandboxed session');
    // The environment of a launcher the service started: the bench's own, but no SHLVL, as the services here have none.
    const hostEnv = { ...(process.env as Record<string, string>) };
    delete hostEnv.SHLVL;
    const phaseEnv = { ...hostEnv, ...launcherSpawn({ command: 'sh', args: [], env: {} }, policy).env };
    const phases: Record<string, number[]> = {};
    const direct: number[] = [];
    const launcher: number[] = [];
    const nodeBoot: number[] = [];
    const swcBoot: number[] = [];
    const bashRc: number[] = [];
    const bashNoRc: number[] = [];
    let from = '';
    for (let i = 0; i < PHASE_RUNS; i++) {
      const at = now();
      const p = await run(process.execPath, [join(ROOT, 'bench/sandbox/launcher-phases.js'), ...PRINT_ONE_LINE], { env: phaseEnv, cwd });
      const report = JSON.parse(p.err.trim().split('\n').pop() ?? '{}') as { from: string; marks: Record<string, number> };
      from = report.from;
      let prev = at;
      for (const [k, t] of Object.entries(report.marks)) {
        (phases[k] ??= []).push(t - prev);
        prev = t;
      }
      (phases.total ??= []).push(report.marks.worker_output - at);
      const spec = launcherSpawn({ command: PRINT_ONE_LINE[0], args: [...PRINT_ONE_LINE.slice(1)], env: hostEnv }, policy);
      launcher.push((await run(spec.command, spec.args, { env: spec.env, cwd })).firstByte);
      direct.push((await run(PRINT_ONE_LINE[0], PRINT_ONE_LINE.slice(1), { cwd })).firstByte);
      const t0 = now();
      await run(process.execPath, ['-e', '0']);
      nodeBoot.push(now() - t0);
      const t1 = now();
      await run(process.execPath, ['-r', '@swc-node/register', '-e', '0'], { cwd: ROOT });
      swcBoot.push(now() - t1);
      bashRc.push((await run('bash', ['-c', 'echo x'], { env: hostEnv })).firstByte);
      bashNoRc.push((await run('bash', ['-c', 'echo x'], { env: withShellLevel(hostEnv) })).firstByte);
    }
    const names: Record<string, string> = {
      origin: 'spawn → node running (exec, V8 up)',
      entered: 'node bootstrap → the entry script',
      build_checked: 'is the build current? (walk of src/, web/)',
      swc_registered: '@swc-node/register (no build)',
      own_modules: "the launcher's own modules",
      srt_required: 'require of srt',
      initialized: 'SandboxManager.initialize (proxy, socat bridge)',
      wrapped: 'SandboxManager.wrapWithSandboxArgv',
      inner_shell: 'bwrap (+ apply-seccomp) → the shell inside',
      worker_output: "inner script (env, excludes, port forward) → worker's byte",
      total: 'total, spawn → worker output',
    };
    console.log(`\nwhere a sandboxed start goes: the launcher's steps (bench/sandbox/launcher-phases.js, from the ${from}), ${PHASE_RUNS} runs, the session's own policy`);
    console.log(`${''.padEnd(58)}${'p50'.padStart(10)}${'max'.padStart(11)}`);
    for (const [k, xs] of Object.entries(phases)) console.log(`  ${(names[k] ?? k).padEnd(56)}${ms(median(xs))} ${ms(Math.max(...xs))}`);
    console.log(
      `  the real launcher (bin/brainstem-sandbox.js), spawn → first byte: p50 ${ms(median(launcher))}; the same command unsandboxed: ${ms(median(direct))}; added ${ms(median(launcher) - median(direct))}`,
    );
    console.log(`  node -e 0: p50 ${ms(median(nodeBoot))}; node -r @swc-node/register -e 0 (a launcher from source, no build): ${ms(median(swcBoot))}`);
    console.log(`  bash -c, stdin a socket, no SHLVL (reads ~/.bashrc; srt's shell did before the launcher set SHLVL): ${ms(median(bashRc))}; with SHLVL=1: ${ms(median(bashNoRc))}`);

    // 3. a CPU-bound worker, interleaved.
    const rounds = calibrate(2000);
    const cpu: Record<Mode, { wall: number; cpu: number }[]> = { auto: [], off: [] };
    for (let i = 0; i < CPU_RUNS; i++) for (const mode of i % 2 === 0 ? (['auto', 'off'] as const) : (['off', 'auto'] as const)) cpu[mode].push(await cpuRun(services[mode], cwd, rounds));
    console.log(`\nCPU-bound worker: node hashing ${rounds.toLocaleString('en-US')} × sha256 over 1 KB (calibrated to about 2 s in the bench process), ${CPU_RUNS} runs each, interleaved; its own clock and CPU time`);
    for (const mode of ['off', 'auto'] as const) {
      console.log(`${(mode === 'auto' ? 'sandboxed (auto)' : 'unsandboxed (off)').padEnd(22)}median ${ms(median(cpu[mode].map((r) => r.wall)))}, CPU ${ms(median(cpu[mode].map((r) => r.cpu)))}   (${cpu[mode].map((r) => f(r.wall, 0)).join(', ')} ms)`);
    }
    // Each sandboxed run against the unsandboxed run beside it: on shared cores the load drifts between pairs more than within one.
    const pairRatios = cpu.auto.map((r, i) => r.wall / cpu.off[i].wall);
    const cpuRatio = median(pairRatios);
    console.log(`ratio sandboxed / unsandboxed: median of the ${CPU_RUNS} pairs ${f(cpuRatio, 3)}× (${pairRatios.map((x) => f(x, 2)).join(', ')}); of the medians ${f(median(cpu.auto.map((r) => r.wall)) / median(cpu.off.map((r) => r.wall)), 3)}×`);

    // 4. throughput to a loopback server: direct, and from inside the real launcher through srt's proxy.
    const server = await loopbackServer(DOWNLOAD_MB);
    const url = `http://127.0.0.1:${server.port}/`;
    try {
      const netPolicy = sandboxPolicy({
        session_id: 'bench-net',
        runtime: 'command',
        cwd,
        home: process.env.HOME ?? '/tmp',
        service_home: process.env.HOME ?? '/tmp',
        env: {},
        data_dir: join(dir.path, 'data-net'),
        profiles_dir: join(dir.path, 'profiles-net'),
        worktrees_dir: join(dir.path, 'data-net', 'worktrees'),
        session_config_dir: join(dir.path, 'data-net', 'sessions', 'bench-net'),
        // As a worker reaches the service: 127.0.0.1:<port> forwarded inside the sandbox, through srt's proxy.
        service_url: url,
        tmp_root: dir.path,
        git_common_dir: null,
        data_dir_entries: [],
        config_urls: [],
        profile: { allow_write: [], deny_read: [], network: { allow: [`127.0.0.1:${server.port}`], deny: [] } },
      });
      const inside = (curl: string) => {
        const spec = launcherSpawn({ command: 'sh', args: ['-c', curl], env: process.env as Record<string, string> }, netPolicy);
        return run(spec.command, spec.args, { env: spec.env, cwd });
      };
      const q = `-s -o /dev/null -w '%{size_download} %{speed_download}'`;
      const speeds = { direct: [] as number[], proxy: [] as number[], forward: [] as number[] };
      for (let i = 0; i < NET_RUNS; i++) {
        speeds.direct.push(curlResult(await run('curl', [...CURL_W, '--noproxy', '*', url]), DOWNLOAD_MB, 'direct'));
        speeds.proxy.push(curlResult(await inside(`curl ${q} --noproxy '' -x "$HTTP_PROXY" ${url}`), DOWNLOAD_MB, 'through the proxy'));
        speeds.forward.push(curlResult(await inside(`curl ${q} --noproxy '*' ${url}`), DOWNLOAD_MB, 'through the forward'));
      }
      const mbs = (x: number) => `${f(x / (1 << 20), 0).padStart(6)} MB/s`;
      console.log(`\nthroughput: curl downloading ${DOWNLOAD_MB} MB from a loopback HTTP server (another node process), ${NET_RUNS} runs each, interleaved; the sandboxed curl runs in the real launcher, 127.0.0.1:${server.port} in its policy's network allow`);
      console.log(`  direct (curl on the host)                                      median ${mbs(median(speeds.direct))}   (${speeds.direct.map((x) => f(x / (1 << 20), 0)).join(', ')})`);
      console.log(`  sandboxed, srt's HTTP proxy (curl -x $HTTP_PROXY)             median ${mbs(median(speeds.proxy))}   (${speeds.proxy.map((x) => f(x / (1 << 20), 0)).join(', ')})   ${f(median(speeds.proxy) / median(speeds.direct), 2)}× direct`);
      console.log(`  sandboxed, the port forward (BRAINSTEM_URL's way: CONNECT)     median ${mbs(median(speeds.forward))}   (${speeds.forward.map((x) => f(x / (1 << 20), 0)).join(', ')})   ${f(median(speeds.forward) / median(speeds.direct), 2)}× direct`);
      const proxyRatio = median(speeds.proxy) / median(speeds.direct);

      console.log(`\ntargets (issue 49)`);
      console.log(`  p50 start +150 ms or less: ${met(addP50 <= 150)} (+${f(addP50)} ms)`);
      console.log(`  CPU-bound run within 5% (sandboxed ≤ 1.05× unsandboxed, median of the pairs): ${met(cpuRatio <= 1.05)} (${f(cpuRatio, 3)}×)`);
      console.log(`  proxy throughput at least 0.5× direct: ${met(proxyRatio >= 0.5)} (${f(proxyRatio, 2)}×)`);
    } finally {
      server.child.kill();
    }
  } finally {
    for (const svc of Object.values(services)) {
      svc.child.kill('SIGTERM');
      await svc.exited;
    }
    dir.remove();
  }
  console.log(`load at the end: ${loadavg().map((x) => f(x, 2)).join(' ')}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
