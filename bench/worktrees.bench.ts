// npm run bench:worktrees [runs] — what a worktree per session costs. On a generated repository of 10,000 files (one
// commit), the time from POST /api/v1/coding-sessions to the worker's first output byte, with isolation "worktree" and
// without (default 5 runs each, interleaved), then 20 session starts at once on that repository, both ways. The worker
// is `node -e` printing one marker line; its time to run is in both figures alike. Every call's status is checked.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { filter, firstValueFrom } from 'rxjs';
import { callApi } from './api-call';
import { SessionsService } from '../src/sessions/sessions.service';
import { startTestApp } from '../test/support/test-app';
import { tempDir } from '../test/support/temp-dir';

const RUNS = Number(process.argv[2] ?? 5);
const FILES = 10_000;
const AT_ONCE = 20;
const MARKER = 'first-output-byte';
const WORKER = `process.stdout.write(${JSON.stringify(`${MARKER}\n`)}); setInterval(() => {}, 1000);`;

function generateRepository(dir: string): string {
  const repo = join(dir, 'repo');
  mkdirSync(repo);
  for (let d = 0; d < FILES / 100; d++) {
    mkdirSync(join(repo, `pkg${d}`));
    for (let f = 0; f < 100; f++) writeFileSync(join(repo, `pkg${d}`, `file${f}.ts`), `export const value${f} = ${d * 100 + f};\n`);
  }
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.invalid', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'generated');
  // Written to disk before anything is measured: the kernel writing the generated tree back while the first checkouts
  // ran made them seconds slower than the later ones in the same run.
  execFileSync('sync');
  return repo;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${x.toFixed(0).padStart(5)} ms`;

async function main(): Promise<void> {
  const dir = tempDir('brainstem-bench-wt-');
  const t0 = performance.now();
  const repo = generateRepository(dir.path);
  console.log(`worktrees bench: a repository of ${FILES.toLocaleString('en-US')} files generated and committed in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${execFileSync('git', ['--version'], { encoding: 'utf8' }).trim()}`);
  const t = await startTestApp({ BRAINSTEM_MAX_SESSIONS: String(AT_ONCE * 4 + RUNS * 4), BRAINSTEM_WORKTREES_DIR: join(dir.path, 'worktrees') }, { listen: true });
  const svc = { url: t.url, auth: t.auth() };
  const sessions = t.app.get(SessionsService);
  const started: string[] = [];

  /** From the create's request to the worker's marker in its output. */
  const firstByte = async (isolation: 'none' | 'worktree', title: string): Promise<number> => {
    const at = performance.now();
    const s = await callApi<{ id: string }>(svc, 'POST', '/coding-sessions', 201, { title, runtime: 'command', command: process.execPath, args: ['-e', WORKER], cwd: repo, isolation });
    started.push(s.id);
    await firstValueFrom((await sessions.outputStream(s.id, 1000)).pipe(filter((m) => (m.type === 'tail' ? m.data.lines.includes(MARKER) : m.data.text.includes(MARKER)))));
    return performance.now() - at;
  };

  // Warm the paths once each way.
  await firstByte('none', 'warm');
  await firstByte('worktree', 'warm');
  const times = { none: [] as number[], worktree: [] as number[] };
  for (let i = 0; i < RUNS; i++) {
    times.none.push(await firstByte('none', `plain ${i}`));
    times.worktree.push(await firstByte('worktree', `isolated ${i}`));
  }
  console.log(`\ncreate → the worker's first output byte, ${RUNS} runs each, interleaved`);
  for (const k of ['none', 'worktree'] as const) console.log(`isolation ${k.padEnd(9)} median ${ms(median(times[k]))}   (${times[k].map((x) => x.toFixed(0)).join(', ')} ms)`);
  console.log(`ratio worktree / none: ${(median(times.worktree) / median(times.none)).toFixed(1)}×`);

  console.log(`\n${AT_ONCE} session starts at once on the repository`);
  for (const isolation of ['none', 'worktree'] as const) {
    const at = performance.now();
    const each = await Promise.all(Array.from({ length: AT_ONCE }, (_, i) => firstByte(isolation, `burst ${isolation} ${i}`)));
    const all = performance.now() - at;
    console.log(`isolation ${isolation.padEnd(9)} all ${AT_ONCE} printing after ${ms(all)}   each: median ${ms(median(each))}, max ${ms(Math.max(...each))}`);
  }
  const branches = execFileSync('git', ['branch', '--list', 'brainstem/*'], { cwd: repo, encoding: 'utf8' }).trim().split('\n').length;
  console.log(`branches brainstem/* in the repository: ${branches} (one per isolated session, names unique)`);

  for (const id of started) await callApi(svc, 'POST', `/coding-sessions/${id}/stop`, 200, { grace_ms: 1000 });
  await t.close();
  dir.remove();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
