/**
 * Failover time: two service processes on one PostgreSQL journal (a throwaway cluster, fsync on), supervision on with a
 * round in flight on the leader; the leader is killed (SIGKILL) and the clock runs until the other node has taken the
 * lease and a round has started there (its restore wakes the interrupted round's reasons at once). Each kill starts
 * from a fresh database and fresh nodes, so every sample is the same scenario. p50 and p99 over the kills. Every call
 * carries the user's credential and must answer the status it should, else the bench stops.
 *
 *   npm run bench:failover [-- --kills 20 --ttl 6]
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import { startPgCluster } from '../test/support/pg-cluster';
import { ServiceProcess, startService } from '../test/support/service-process';
import { tempDir } from '../test/support/temp-dir';
import { waitFor } from '../test/support/wait-for';
import { WORKERS, WorkerReaper } from '../test/support/workers';
import { callApi } from './api-call';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const KILLS = arg('kills', 20);
const TTL_S = arg('ttl', 6);

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}


async function main(): Promise<void> {
  const cluster = await startPgCluster({ durable: true });
  const samples: Array<{ lease: number; round: number }> = [];
  try {
    const admin = new Pool({ connectionString: (await cluster.createDatabase()).url, max: 1 });
    const version = (await admin.query('SHOW server_version')).rows[0].server_version as string;
    await admin.end();
    console.log(`failover bench: 2 nodes on PostgreSQL ${version} (throwaway cluster, fsync on), BRAINSTEM_NODE_LEASE_TTL_S=${TTL_S}, ${KILLS} kills`);
    for (let k = 1; k <= KILLS; k++) {
      const db = await cluster.createDatabase();
      const dir = tempDir('brainstem-failover-bench-');
      const reaper = new WorkerReaper();
      const nodes: ServiceProcess[] = [];
      const pool = new Pool({ connectionString: db.url, max: 1 });
      try {
        const boot = async (id: string) => {
          const svc = await startService({
            BRAINSTEM_JOURNAL_URL: db.url,
            BRAINSTEM_JOURNAL_DIR: join(dir.path, id),
            BRAINSTEM_NODE_ID: id,
            BRAINSTEM_NODE_LEASE_TTL_S: String(TTL_S),
            BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '100',
          });
          nodes.push(svc);
          return svc;
        };
        const worker = async (svc: ServiceProcess) => {
          const s = await callApi<Json>(svc, 'POST', '/coding-sessions', 201, { cwd: dir.path, command: process.execPath, args: [join(WORKERS, 'quiet.js')] });
          reaper.track(s.pid);
          return s;
        };
        const holder = async () => (await pool.query('SELECT holder, term::int AS term FROM brainstem_leases')).rows[0] as { holder: string; term: number } | undefined;
        const roundsStartedAfter = async (seq: number) =>
          Number((await pool.query(`SELECT count(*) AS n FROM brainstem_events WHERE stream = 'supervision' AND seq > $1 AND body LIKE '%"type":"round.started"%'`, [seq])).rows[0].n);

        const a = await boot('a');
        await waitFor(async () => (await holder())?.holder === 'a', { timeoutMs: 60_000, what: 'a to lead' });
        const b = await boot('b');
        const wa = await worker(a);
        await worker(b);
        await callApi(a, 'POST', '/session-os/main-brain/autonomous', 200, { enabled: true, max_turns: 100 });
        await callApi(a, 'POST', `/coding-sessions/${wa.id}/signals`, 200, { type: 'ask_human', question: 'go?' });
        await waitFor(async () => (await roundsStartedAfter(0)) === 1, { timeoutMs: 60_000, what: 'a round in flight on a' });
        const head = Number((await pool.query('SELECT seq FROM brainstem_head')).rows[0].seq);

        const t0 = performance.now();
        a.child.kill('SIGKILL');
        let leaseAt = 0;
        await waitFor(
          async () => {
            if (!leaseAt && (await holder())?.holder === 'b') leaseAt = performance.now();
            return (await roundsStartedAfter(head)) > 0;
          },
          { timeoutMs: 120_000, intervalMs: 10, what: 'a round on b' },
        );
        const roundAt = performance.now();
        samples.push({ lease: (leaseAt || roundAt) - t0, round: roundAt - t0 });
        console.log(`  kill ${String(k).padStart(2)}: lease taken after ${((leaseAt || roundAt) - t0).toFixed(0).padStart(5)} ms, a round started on the new leader after ${(roundAt - t0).toFixed(0).padStart(5)} ms`);
      } finally {
        await pool.end();
        for (const n of nodes) if (n.child.exitCode === null) n.child.kill('SIGKILL');
        await Promise.all(nodes.map((n) => n.exited));
        reaper.killAll();
        await db.drop();
        dir.remove();
      }
    }
  } finally {
    cluster.stop();
  }
  const f = (v: number) => `${(v / 1000).toFixed(2)} s`;
  const lease = samples.map((s) => s.lease);
  const round = samples.map((s) => s.round);
  console.log(`\nleader killed → lease taken by the other node          p50 ${f(percentile(lease, 50))}   p99 ${f(percentile(lease, 99))}   max ${f(Math.max(...lease))}`);
  console.log(`leader killed → rounds flowing again on the new leader  p50 ${f(percentile(round, 50))}   p99 ${f(percentile(round, 99))}   max ${f(Math.max(...round))}   (n=${samples.length})`);
  console.log(`bound (default ≤ 10 s with TTL 6): ${Math.max(...round) <= 10_000 ? 'MET' : 'MISSED'} at every kill`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
