/**
 * A session's diff read through a node that does not own it, against the same read on the owner, in one run: two
 * Brainstem nodes (a, b: real service processes) on one throwaway PostgreSQL cluster (fsync on); a worker of a's, in a
 * worktree of a real git repository, has changed FILES files and committed them. GET …/diff (the default page, 1,000
 * patch lines at most) and GET …/diff?file=… (one file's patch), on a (the owner: git runs there, the baseline) and
 * through b (forwarded to a with b's node credential), READS reads each, with 1 and 4 clients; beside each load, the CPU
 * time per read of each node's process and of a's children (git), from /proc (Linux). Every answer must be 200, else the
 * bench stops.
 *
 *   npm run bench:worktree-diff [-- --reads 300 --files 10]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPgCluster } from '../test/support/pg-cluster';
import { ServiceProcess, startService } from '../test/support/service-process';
import { tempDir } from '../test/support/temp-dir';
import { waitFor } from '../test/support/wait-for';
import { WORKERS, WorkerReaper } from '../test/support/workers';
import { callApi } from './api-call';
import { LoadResult, load } from './http-load';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const READS = arg('reads', 300);
const FILES = arg('files', 10);
const LINES = 60;
const WARMUP = 30;

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** A difference with its sign, +0.3 or -5.3. */
const signed = (x: number): string => `${x < 0 ? '' : '+'}${x.toFixed(1)}`;

/** CPU time (ms) a process used, and its children it waited for (git, for a node), from /proc/<pid>/stat. */
function cpuOf(pid: number): { own: number; children: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command's name, from the third (state): utime, stime, cutime, cstime are the 14th to 17th.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  return { own: ((f[11] + f[12]) * 1000) / CLK_TCK, children: ((f[13] + f[14]) * 1000) / CLK_TCK };
}

const rate = (r: LoadResult) => (r.requests / r.ms) * 1000;
const ms = (v: number) => `${v.toFixed(1).padStart(6)} ms`;
const row = (label: string, r: LoadResult) =>
  console.log(`  ${label.padEnd(46)} ${`${Math.round(rate(r))}/s`.padStart(6)}   p50 ${ms(r.p50)}   p99 ${ms(r.p99)}   max ${ms(r.max)}`);

const fileText = (f: number, tag: string) => Array.from({ length: LINES }, (_, i) => (i % 3 === 0 ? `${tag} ${f}.${i}\n` : `line ${f}.${i}\n`)).join('');

function repository(dir: string): string {
  const repo = join(dir, 'repo');
  mkdirSync(join(repo, 'src'), { recursive: true });
  for (let f = 0; f < FILES * 5; f++) writeFileSync(join(repo, 'src', `file${f}.txt`), fileText(f, 'base'));
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.invalid', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  return repo;
}

async function main(): Promise<void> {
  const cluster = await startPgCluster({ durable: true });
  const db = await cluster.createDatabase();
  const root = tempDir('bench-worktree-diff-');
  const reaper = new WorkerReaper();
  const nodes = new Map<'a' | 'b', ServiceProcess>();
  try {
    const repo = repository(root.path);
    for (const id of ['a', 'b'] as const) {
      nodes.set(
        id,
        await startService({
          BRAINSTEM_JOURNAL_URL: db.url,
          BRAINSTEM_JOURNAL_DIR: join(root.path, id, 'journal'),
          BRAINSTEM_PROFILES_DIR: join(root.path, id, 'profiles'),
          BRAINSTEM_WORKTREES_DIR: join(root.path, id, 'worktrees'),
          BRAINSTEM_NODE_ID: id,
          BRAINSTEM_API_TOKEN: `token-of-node-${id}`,
        }),
      );
    }
    const a = nodes.get('a') as ServiceProcess;
    const b = nodes.get('b') as ServiceProcess;
    await waitFor(async () => ((await callApi<Json>(b, 'GET', '/cluster', 200)).nodes as Json[]).find((n) => n.id === 'a')?.url === a.url, { timeoutMs: 60_000, what: "b to know a's address" });

    const edits = Object.fromEntries(Array.from({ length: FILES }, (_, f) => [`src/file${f * 5}.txt`, fileText(f * 5, 'changed')]));
    const s = await callApi<Json>(a, 'POST', '/coding-sessions', 201, {
      title: 'diff bench',
      runtime: 'command',
      command: process.execPath,
      args: [join(WORKERS, 'git-editor.js'), JSON.stringify({ write: edits, commit: 'the work' })],
      cwd: repo,
      isolation: 'worktree',
    });
    const path = `/api/v1/coding-sessions/${s.id}/diff`;
    const page = await waitFor(async () => {
      const r = await fetch(`${a.url}${path}`, { headers: a.auth });
      const d = (await r.json()) as Json;
      // git reads the worktree step by step: a read during the commit may see it ahead already, its head not yet.
      return r.status === 200 && d.ahead === 1 && d.head !== d.merge_base && d;
    }, { timeoutMs: 60_000, what: 'the worker to commit' });
    // Launched once its worktree was prepared, after the create answered (with no pid yet).
    reaper.track((await callApi<Json>(a, 'GET', `/coding-sessions/${s.id}`, 200)).pid);
    const patchLines = (page.patches as Json[]).reduce((n, p) => n + (p.lines as unknown[]).length, 0);
    const onB = await waitFor(async () => {
      const r = await fetch(`${b.url}${path}`, { headers: b.auth });
      return r.status === 200 && ((await r.json()) as Json);
    }, { timeoutMs: 60_000, what: 'b to read the diff' });
    if (JSON.stringify(onB) !== JSON.stringify(page)) throw new Error("b's diff differs from a's");
    const bytes = JSON.stringify(page).length;
    console.log(
      `worktree-diff bench: two service processes on one PostgreSQL (throwaway cluster, fsync on); ${execFileSync('git', ['--version'], { encoding: 'utf8' }).trim()}; ` +
        `the worktree: ${page.files_total} files changed of ${FILES * 5}, the page ${patchLines} patch lines (${(bytes / 1024).toFixed(0)} KiB of JSON)`,
    );

    const read = (node: ServiceProcess, query: string, total: number, connections: number) =>
      load({ url: node.url, method: 'GET', total, connections, requests: [{ path: `${path}${query}`, token: node.token }], expect: 200 });
    /** The load, then the CPU each node's process (and a's git) spent on it, per read. */
    const measured = async (node: ServiceProcess, query: string, connections: number) => {
      const before = { a: cpuOf(a.child.pid as number), b: cpuOf(b.child.pid as number) };
      const r = await read(node, query, READS, connections);
      const after = { a: cpuOf(a.child.pid as number), b: cpuOf(b.child.pid as number) };
      const per = (x: number) => `${(x / READS).toFixed(1)} ms`;
      return { r, cpu: `CPU per read: a ${per(after.a.own - before.a.own)} + git ${per(after.a.children - before.a.children)}, b ${per(after.b.own - before.b.own)}` };
    };
    const figures: Array<[string, LoadResult, LoadResult]> = [];
    for (const [what, query] of [
      ['the default page', ''],
      ['one file (?file=)', '?file=src/file0.txt'],
    ] as const) {
      await read(a, query, WARMUP, 1);
      await read(b, query, WARMUP, 1);
      console.log(`\nGET …/diff${query}: ${what}, ${READS} reads each way`);
      for (const connections of [1, 4]) {
        const owner = await measured(a, query, connections);
        const other = await measured(b, query, connections);
        const label = `${what}, ${connections} client${connections > 1 ? 's' : ''}`;
        figures.push([label, owner.r, other.r]);
        row(`${connections} client(s): on a, the owner (the baseline)`, owner.r);
        console.log(`  ${''.padEnd(46)} ${owner.cpu}`);
        row(`${connections} client(s): through b (forwarded to a)`, other.r);
        console.log(`  ${''.padEnd(46)} ${other.cpu}`);
      }
    }
    console.log('\nall figures, one run:');
    for (const [label, owner, other] of figures) {
      console.log(`  ${label.padEnd(30)} through b p99 ${ms(other.p99)} vs ${ms(owner.p99)} on the owner (${(other.p99 / owner.p99).toFixed(2)}×); p50 ${signed(other.p50 - owner.p50)} ms`);
    }
  } finally {
    for (const n of nodes.values()) if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill('SIGTERM');
    await Promise.all([...nodes.values()].map((n) => n.exited));
    reaper.killAll();
    root.remove();
    await db.drop().catch(() => undefined);
    cluster.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
