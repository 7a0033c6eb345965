// npm run bench:start — from `npm start` to the first answer of /api/v1/health, nothing changed since the last build,
// and after a source file was touched. Prints figures, asserts nothing.
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

async function healthy(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } })).ok;
  } catch {
    return false;
  }
}

/** Milliseconds from spawning `npm start` to a 200 from /api/v1/health. */
async function startOnce(): Promise<number> {
  const dir = tempDir('bench-start-');
  const port = await freePort();
  const t0 = performance.now();
  // Its own process group, so npm, its shell and the service all stop together.
  const child = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, BRAINSTEM_JOURNAL_DIR: join(dir.path, 'journal'), BRAINSTEM_PROFILES_DIR: join(dir.path, 'profiles'), BRAINSTEM_PORT: String(port), BRAINSTEM_API_TOKEN: TOKEN, BRAINSTEM_PLUGINS: '', BRAINSTEM_MAIN_BRAIN_DRIVER: 'stream' },
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  try {
    while (!(await healthy(`http://127.0.0.1:${port}/api/v1/health`))) {
      if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return performance.now() - t0;
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    dir.remove();
  }
}

async function main(): Promise<void> {
  const unchanged: number[] = [];
  const touched: number[] = [];
  await startOnce(); // builds whatever is stale, so the runs below start from a built tree
  for (let i = 0; i < RUNS; i++) {
    unchanged.push(await startOnce());
    const now = new Date();
    utimesSync(join(ROOT, 'src/main.ts'), now, now);
    touched.push(await startOnce());
  }
  const fmt = (ms: number[]) => ms.map((m) => `${(m / 1000).toFixed(2)} s`).join(', ');
  console.log(`npm start → /api/v1/health answers (${RUNS} runs each)`);
  console.log(`nothing changed since the last build   ${fmt(unchanged)}`);
  console.log(`src/main.ts touched                    ${fmt(touched)}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
