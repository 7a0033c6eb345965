/**
 * Three Brainstem nodes (a, b, c: real service processes) on one throwaway PostgreSQL cluster (fsync on), every figure
 * in one run, each beside its baseline from the same run:
 *   1. signals/s through each node (POST …/signals for its own sessions, 50 clients), one node at a time and all three
 *      at once; baseline: GET /health on the same node;
 *   2. propagation: an event appended on a, on b's and c's SSE; baseline: on a's own SSE;
 *   3. a session's output read through a node that does not own it: the tail (GET …/output) and the live tail
 *      (…/output/stream); baseline: the same reads on the owner;
 *   4. failover: the lease holder killed (SIGKILL) → the lease taken and rounds flowing on another node, the killed
 *      node started again before the next kill.
 * Every call carries the user's credential of the node it goes to and must answer the status it should, else the
 * bench stops.
 *
 *   npm run bench:cluster3 [-- --signals 6000 --events 200 --reads 2000 --kills 8 --ttl 6]
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startPgCluster } from '../test/support/pg-cluster';
import { ServiceProcess, startService } from '../test/support/service-process';
import { tempDir } from '../test/support/temp-dir';
import { waitFor } from '../test/support/wait-for';
import { WORKERS, WorkerReaper } from '../test/support/workers';
import { callApi } from './api-call';
import { LoadResult, load } from './http-load';
import { SseTimes, percentile, sseTimes } from './sse-times';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SIGNALS = arg('signals', 6000);
const EVENTS = arg('events', 200);
const READS = arg('reads', 2000);
const KILLS = arg('kills', 8);
const TTL_S = arg('ttl', 6);
const CLIENTS = 50;
const SESSIONS_PER_NODE = 20;
const WARMUP = 20;
const IDS = ['a', 'b', 'c'] as const;
type Id = (typeof IDS)[number];
/** A worker that lives and prints nothing: a process as light as there is. */
const SLEEPER = { runtime: 'command', command: '/usr/bin/sleep', args: ['100000'] };
/** A worker that prints 500 lines of 70 characters, then idles. */
const PRINTER = `for (let i = 0; i < 500; i++) console.log('line ' + i + ' ' + 'x'.repeat(60)); setInterval(() => {}, 1e6);`;

const rate = (r: LoadResult) => (r.requests / r.ms) * 1000;
const ms = (v: number) => `${v.toFixed(1).padStart(6)} ms`;
const perS = (v: number) => `${Math.round(v).toLocaleString('en-US').padStart(6)}/s`;
const loadRow = (label: string, r: LoadResult) => console.log(`  ${label.padEnd(52)} ${perS(rate(r))}   p50 ${ms(r.p50)}   p99 ${ms(r.p99)}`);
const sampleRow = (label: string, s: number[]) => console.log(`  ${label.padEnd(52)} p50 ${ms(percentile(s, 50))}   p99 ${ms(percentile(s, 99))}   max ${ms(Math.max(...s))}`);

async function main(): Promise<void> {
  const cluster = await startPgCluster({ durable: true });
  const db = await cluster.createDatabase();
  const root = tempDir('bench-cluster3-');
  const reaper = new WorkerReaper();
  const nodes = new Map<Id, ServiceProcess>();
  const env = (id: Id) => ({
    BRAINSTEM_JOURNAL_URL: db.url,
    BRAINSTEM_JOURNAL_DIR: join(root.path, id, 'journal'),
    BRAINSTEM_PROFILES_DIR: join(root.path, id, 'profiles'),
    BRAINSTEM_NODE_ID: id,
    BRAINSTEM_NODE_LEASE_TTL_S: String(TTL_S),
    BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '100',
    BRAINSTEM_MAX_SESSIONS: '200',
    BRAINSTEM_API_TOKEN: `token-of-node-${id}`,
  });
  const node = (id: Id) => nodes.get(id) as ServiceProcess;
  const boot = async (id: Id) => nodes.set(id, await startService(env(id)));
  const session = async (id: Id, body: Json) => {
    const s = await callApi<Json>(node(id), 'POST', '/coding-sessions', 201, { cwd: root.path, ...body });
    reaper.track(s.pid);
    return s;
  };
  const holder = async () => (await db.sql('SELECT holder FROM brainstem_leases WHERE term > 0'))[0]?.holder as Id | undefined;
  const allUp = async (via: Id) => ((await callApi<Json>(node(via), 'GET', '/cluster', 200)).nodes as Json[]).filter((n) => n.state === 'up' && n.url !== null).length === 3;
  try {
    await boot('a');
    await waitFor(async () => (await holder()) === 'a', { timeoutMs: 60_000, what: 'a to lead' });
    await boot('b');
    await boot('c');
    await waitFor(() => allUp('a'), { timeoutMs: 60_000, what: 'the three nodes up, with their addresses' });
    const version = (await db.sql('SHOW server_version'))[0].server_version;
    console.log(`cluster3 bench: three service processes on one PostgreSQL ${String(version)} (throwaway cluster, fsync on, unix socket), on this machine; BRAINSTEM_NODE_LEASE_TTL_S=${TTL_S}`);

    // 1. Signals through each node, for its own sessions.
    console.log(`\n1. signals: ${SIGNALS.toLocaleString('en-US')} POST …/signals per node for ${SESSIONS_PER_NODE} of its own sessions, ${CLIENTS} clients (autocannon); baseline GET /health on the same node`);
    const signalRequests = new Map<Id, Array<{ path: string; token: string; body: string }>>();
    for (const id of IDS) {
      const owned = await Promise.all(Array.from({ length: SESSIONS_PER_NODE }, () => session(id, SLEEPER)));
      signalRequests.set(
        id,
        owned.map((s, i) => ({
          path: `/api/v1/coding-sessions/${s.id}/signals`,
          token: node(id).token,
          body: JSON.stringify({ type: 'report_progress', status: i % 2 ? 'working' : 'needs_review', message: `tick from ${s.alias}` }),
        })),
      );
    }
    const health = (id: Id, total: number) => load({ url: node(id).url, method: 'GET', total, connections: CLIENTS, requests: [{ path: '/api/v1/health', token: node(id).token }], expect: 200 });
    const signals = (id: Id, total: number) => load({ url: node(id).url, method: 'POST', total, connections: CLIENTS, requests: signalRequests.get(id) ?? [], expect: 200 });
    for (const id of IDS) {
      await health(id, 2000);
      await signals(id, 500);
    }
    const perNode = new Map<Id, { health: LoadResult; signals: LoadResult }>();
    for (const id of IDS) {
      const h = await health(id, SIGNALS);
      const s = await signals(id, SIGNALS);
      perNode.set(id, { health: h, signals: s });
      loadRow(`node ${id}: GET /health (baseline)`, h);
      loadRow(`node ${id}: POST signals`, s);
      console.log(`  ${''.padEnd(52)} ${((rate(s) / rate(h)) * 100).toFixed(0)}% of its health baseline`);
    }
    const t0 = performance.now();
    const together = await Promise.all(IDS.map((id) => signals(id, SIGNALS)));
    const togetherRate = (together.length * SIGNALS) / ((performance.now() - t0) / 1000);
    together.forEach((r, i) => loadRow(`node ${IDS[i]}: POST signals, the three nodes at once`, r));
    console.log(`  all three at once: ${perS(togetherRate)} in all (the journal is one database: ${(togetherRate / rate((perNode.get('a') as { signals: LoadResult }).signals)).toFixed(2)}× node a alone)`);

    // 2. Propagation.
    console.log(`\n2. propagation: ${EVENTS} events appended one at a time on a (PATCH …/supervision), after ${WARMUP} for warm-up; from the request's start`);
    const flipped = await session('a', SLEEPER);
    const filter = `/api/v1/events/stream?stream=session-${flipped.id}&type=session.exclusion_changed`;
    const streams = new Map<Id, SseTimes>();
    for (const id of IDS) streams.set(id, await sseTimes(`${node(id).url}${filter}`, node(id).auth));
    const seen = new Map<Id, number[]>(IDS.map((id) => [id, []]));
    for (let i = 0; i < WARMUP + EVENTS; i++) {
      const at = performance.now();
      await callApi(node('a'), 'PATCH', `/coding-sessions/${flipped.id}/supervision`, 200, { excluded: i % 2 === 0 });
      await Promise.all(IDS.map((id) => (streams.get(id) as SseTimes).next(i + 1)));
      if (i >= WARMUP) for (const id of IDS) (seen.get(id) as number[]).push((streams.get(id) as SseTimes).times[i] - at);
    }
    for (const s of streams.values()) s.close();
    const own = seen.get('a') as number[];
    sampleRow("on a's SSE (same node, the baseline)", own);
    for (const id of ['b', 'c'] as const) sampleRow(`on ${id}'s SSE (another node)`, seen.get(id) as number[]);
    const propagation = own.map((t, i) => Math.max((seen.get('b') as number[])[i], (seen.get('c') as number[])[i]) - t);
    sampleRow('the later of b and c after a (the propagation)', propagation);

    // 3. The output of a's session read through b.
    console.log(`\n3. output: a session of a's printed 500 lines; GET …/output?tail=100, ${READS} reads each way`);
    const printer = await session('a', { runtime: 'command', command: process.execPath, args: ['-e', PRINTER] });
    const tailPath = `/api/v1/coding-sessions/${printer.id}/output?tail=100`;
    await waitFor(async () => (await callApi<Json>(node('a'), 'GET', tailPath.slice('/api/v1'.length), 200)).lines.length === 100, { timeoutMs: 60_000, what: 'the 500 lines' });
    const tail = (id: Id, total: number, connections: number) => load({ url: node(id).url, method: 'GET', total, connections, requests: [{ path: tailPath, token: node(id).token }], expect: 200 });
    await tail('a', 500, 1);
    await tail('b', 500, 1);
    const reads: Array<[string, LoadResult, LoadResult]> = [];
    for (const connections of [1, 10]) {
      const owner = await tail('a', READS, connections);
      const other = await tail('b', READS, connections);
      reads.push([`${connections} client${connections > 1 ? 's' : ''}`, owner, other]);
      loadRow(`${connections} client(s): on a, the owner (the baseline)`, owner);
      loadRow(`${connections} client(s): through b (forwarded to a)`, other);
      console.log(`  ${''.padEnd(52)} p99 ${(other.p99 / owner.p99).toFixed(2)}× the owner's, ${((rate(other) / rate(owner)) * 100).toFixed(0)}% of its reads/s`);
    }
    console.log(`   live tail: ${EVENTS} messages to a worker of a's, each echoed in a line; from the message's request to the line on each stream`);
    const echo = await session('a', { runtime: 'command', command: process.execPath, args: [join(WORKERS, 'node-worker.js')] });
    const live = new Map<'a' | 'b', SseTimes>();
    for (const id of ['a', 'b'] as const) live.set(id, await sseTimes(`${node(id).url}/api/v1/coding-sessions/${echo.id}/output/stream?tail=1`, node(id).auth));
    const arrivals = new Map<'a' | 'b', number[]>([
      ['a', []],
      ['b', []],
    ]);
    /** The first message from index `from` on that carries the marker: its index and when it came. */
    const arrivalOf = async (s: SseTimes, marker: string, from: number): Promise<{ index: number; at: number }> => {
      for (let i = from; ; i++) {
        await s.next(i + 1);
        if (s.data[i].includes(marker)) return { index: i, at: s.times[i] };
      }
    };
    const cursor = { a: 0, b: 0 };
    for (let i = 0; i < WARMUP + EVENTS; i++) {
      const marker = `got: m${i}\\n`;
      const at = performance.now();
      await callApi(node('a'), 'POST', `/coding-sessions/${echo.id}/messages`, 200, { text: `m${i}` });
      for (const id of ['a', 'b'] as const) {
        const s = live.get(id) as SseTimes;
        const got = await arrivalOf(s, marker, cursor[id]);
        cursor[id] = got.index + 1;
        if (i >= WARMUP) (arrivals.get(id) as number[]).push(got.at - at);
      }
    }
    for (const s of live.values()) s.close();
    const liveOwn = arrivals.get('a') as number[];
    const liveOther = arrivals.get('b') as number[];
    sampleRow("on a's stream (the owner, the baseline)", liveOwn);
    sampleRow("on b's stream (relayed from a)", liveOther);
    sampleRow('the relay itself (b after a)', liveOther.map((t, i) => t - liveOwn[i]));

    // 4. Failover.
    console.log(`\n4. failover: ${KILLS} kills of the lease holder (SIGKILL), supervision on with a round in flight; the killed node started again before the next`);
    const asking = await session('b', SLEEPER);
    await callApi(node('a'), 'POST', '/session-os/main-brain/autonomous', 200, { enabled: true, max_turns: 1000 });
    await callApi(node('b'), 'POST', `/coding-sessions/${asking.id}/signals`, 200, { type: 'ask_human', question: 'go?' });
    const roundsAfter = async (seq: number) =>
      Number((await db.sql(`SELECT count(*) AS n FROM brainstem_events WHERE stream = 'supervision' AND seq > $1 AND body LIKE '%"type":"round.started"%'`, [seq]))[0].n);
    await waitFor(async () => (await roundsAfter(0)) > 0, { timeoutMs: 60_000, what: 'a round in flight' });
    const leaseTaken: number[] = [];
    const roundsFlowing: number[] = [];
    for (let k = 1; k <= KILLS; k++) {
      const victim = (await holder()) as Id;
      const head = Number((await db.sql('SELECT seq FROM brainstem_head'))[0].seq);
      const killed = node(victim);
      const at = performance.now();
      killed.child.kill('SIGKILL');
      let takenAt = 0;
      await waitFor(
        async () => {
          if (!takenAt && ((await holder()) ?? victim) !== victim) takenAt = performance.now();
          return (await roundsAfter(head)) > 0;
        },
        { timeoutMs: 120_000, intervalMs: 10, what: 'a round on another node' },
      );
      const roundAt = performance.now();
      leaseTaken.push((takenAt || roundAt) - at);
      roundsFlowing.push(roundAt - at);
      console.log(`  kill ${String(k).padStart(2)} (node ${victim}): lease taken by node ${await holder()} after ${((takenAt || roundAt) - at).toFixed(0).padStart(5)} ms, rounds flowing after ${(roundAt - at).toFixed(0).padStart(5)} ms`);
      await killed.exited;
      await boot(victim);
      const other = IDS.find((id) => id !== victim) as Id;
      await waitFor(() => allUp(other), { timeoutMs: 60_000, what: `node ${victim} up again` });
    }
    sampleRow('holder killed → lease taken by another node', leaseTaken);
    sampleRow('holder killed → rounds flowing on the new holder', roundsFlowing);

    console.log('\nall figures, one run:');
    for (const id of IDS) {
      const r = perNode.get(id) as { health: LoadResult; signals: LoadResult };
      console.log(`  signals through ${id}: ${perS(rate(r.signals))}, p99 ${ms(r.signals.p99)} (${((rate(r.signals) / rate(r.health)) * 100).toFixed(0)}% of its GET /health)`);
    }
    console.log(`  signals through the three at once: ${perS(togetherRate)} in all`);
    console.log(`  propagation p99: ${ms(percentile(propagation, 99))} (a's own SSE p99 ${ms(percentile(own, 99))})`);
    console.log(`  failover p99: lease ${ms(percentile(leaseTaken, 99))}, rounds flowing ${ms(percentile(roundsFlowing, 99))} (n=${KILLS}, TTL ${TTL_S} s)`);
    for (const [label, owner, other] of reads) {
      console.log(`  output tail from a non-owner, ${label}: p99 ${ms(other.p99)} vs ${ms(owner.p99)} on the owner (${(other.p99 / owner.p99).toFixed(2)}×)`);
    }
    console.log(`  live tail relayed by a non-owner: p99 ${ms(percentile(liveOther, 99))} vs ${ms(percentile(liveOwn, 99))} on the owner`);
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
