// npm run bench:cluster [events] — event propagation between Brainstem nodes sharing a PostgreSQL journal: two real
// service processes (nodes a and b) on a throwaway cluster (fsync on), an event appended on a through its REST API,
// timed until a's own SSE shows it (the same-node baseline) and until b's SSE does. Every call carries the user's
// credential and must answer the status it should (an SSE 200), else the bench stops. Prints figures.
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startPgCluster } from '../test/support/pg-cluster';
import { callApi } from './api-call';
import { percentile, sseTimes } from './sse-times';
import { ServiceProcess, startService } from '../test/support/service-process';
import { tempDir } from '../test/support/temp-dir';
import { WORKERS, WorkerReaper } from '../test/support/workers';

const EVENTS = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 400);
const WARMUP = 20;

async function main(): Promise<void> {
  const cluster = await startPgCluster({ durable: true });
  const db = await cluster.createDatabase();
  const dirs = [tempDir('bench-node-a-'), tempDir('bench-node-b-')];
  const services: ServiceProcess[] = [];
  const reaper = new WorkerReaper();
  try {
    for (const [i, id] of ['a', 'b'].entries()) {
      services.push(await startService({ BRAINSTEM_JOURNAL_URL: db.url, BRAINSTEM_JOURNAL_DIR: dirs[i].path, BRAINSTEM_NODE_ID: id }));
    }
    const [a, b] = services;
    // A quiet worker of a's, whose exclusion flag each request flips: one event per request, appended on a.
    const session = await callApi<{ id: string; pid: number | null }>(a, 'POST', '/coding-sessions', 201, { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: tmpdir() });
    reaper.track(session.pid);
    const filter = `/api/v1/events/stream?stream=session-${session.id}&type=session.exclusion_changed`;
    const onA = await sseTimes(`${a.url}${filter}`, a.auth);
    const onB = await sseTimes(`${b.url}${filter}`, b.auth);
    const sameNode: number[] = [];
    const otherNode: number[] = [];
    for (let i = 0; i < WARMUP + EVENTS; i++) {
      const t0 = performance.now();
      await callApi(a, 'PATCH', `/coding-sessions/${session.id}/supervision`, 200, { excluded: i % 2 === 0 });
      await Promise.all([onA.next(i + 1), onB.next(i + 1)]);
      if (i < WARMUP) continue;
      sameNode.push(onA.times[i] - t0);
      otherNode.push(onB.times[i] - t0);
    }
    onA.close();
    onB.close();
    const version = (await db.sql('SHOW server_version'))[0].server_version;
    const f = (n: number) => n.toFixed(1).padStart(7);
    console.log(`event propagation between nodes — PostgreSQL ${String(version)} (throwaway cluster, fsync on, unix socket), two service processes on this machine`);
    console.log(`${EVENTS} events appended one at a time on node a (PATCH …/supervision → session.exclusion_changed), after ${WARMUP} for warm-up; from the request's start:`);
    const row = (label: string, s: number[]) => console.log(`  ${label.padEnd(44)} p50 ${f(percentile(s, 50))} ms   p99 ${f(percentile(s, 99))} ms   max ${f(Math.max(...s))} ms`);
    row("visible on a's SSE (same node, the baseline)", sameNode);
    row("visible on b's SSE (another node)", otherNode);
    const lag = otherNode.map((t, i) => t - sameNode[i]);
    row("b's SSE after a's (the propagation itself)", lag);
  } finally {
    for (const s of services) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
    reaper.killAll();
    for (const d of dirs) d.remove();
    await db.drop().catch(() => undefined);
    cluster.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
