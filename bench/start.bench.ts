// npm run bench:start — from the command to the first answer of /api/v1/health: `npm start` with nothing changed since
// the last build and with a source touched, beside the start as it was (tsc before every start) and the bare service
// (node on the built tree) in the same run, interleaved. The health check's first answer must be 200 (it is sent with the
// user's token, which it checks when sent), else the bench stops. Prints figures.
import { spawn } from 'node:child_process';
import { utimesSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { tempDir } from '../test/support/temp-dir';

const ROOT = resolve(__dirname, '..');
const RUNS = Number(process.argv[2] ?? 3);
const TOKEN = 'bench-start-token-0123456789abcdef';

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? done(address.port) : fail(new Error('no port'))));
    });
  });
}

/** False while nothing listens; once the service answers, its answer must be a 200. */
async function healthy(url: string): Promise<boolean> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
  } catch {
    return false;
  }
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}, expected 200: ${(await res.text()).slice(0, 500)}`);
  return true;
}

/** Milliseconds from spawning the command to a 200 from /api/v1/health. */
async function startOnce(command: string[]): Promise<number> {
  const dir = tempDir('bench-start-');
  const port = await freePort();
  const t0 = performance.now();
  // Its own process group, so npm, its shell and the service all stop together.
  const child = spawn(command[0], command.slice(1), {
    cwd: ROOT,
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, BRAINSTEM_JOURNAL_DIR: join(dir.path, 'journal'), BRAINSTEM_PROFILES_DIR: join(dir.path, 'profiles'), BRAINSTEM_PORT: String(port), BRAINSTEM_API_TOKEN: TOKEN, BRAINSTEM_PLUGINS: '', BRAINSTEM_MAIN_BRAIN_DRIVER: 'stream' },
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  try {
    while (!(await healthy(`http://127.0.0.1:${port}/api/v1/health`))) {
      if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited ${child.exitCode}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return performance.now() - t0;
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    dir.remove();
  }
}

const NPM_START = ['npm', 'start', '--silent'];
const COMPILE_EACH_TIME = ['sh', '-c', 'npm run build --silent && node dist/src/main.js'];
const BARE = ['node', 'dist/src/main.js'];

async function main(): Promise<void> {
  const rows: Array<[string, number[]]> = [
    ['npm start, nothing changed', []],
    ['npm start, src/main.ts touched', []],
    ['tsc before every start (before)', []],
    ['node dist/src/main.js (the floor)', []],
  ];
  await startOnce(NPM_START); // builds whatever is stale, so the runs below start from a built tree
  for (let i = 0; i < RUNS; i++) {
    rows[0][1].push(await startOnce(NPM_START));
    const now = new Date();
    utimesSync(join(ROOT, 'src/main.ts'), now, now);
    rows[1][1].push(await startOnce(NPM_START));
    rows[2][1].push(await startOnce(COMPILE_EACH_TIME));
    rows[3][1].push(await startOnce(BARE));
  }
  const median = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)];
  const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  console.log(`command → /api/v1/health answers, ${RUNS} runs each, interleaved`);
  for (const [label, ms] of rows) console.log(`${label.padEnd(36)} median ${fmt(median(ms))}   (${ms.map(fmt).join(', ')})`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
