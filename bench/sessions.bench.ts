// npm run bench:sessions [signals] [--no-loops] [--shared-tree] — session actors under HTTP load, beside a raw baseline
// from the same run.
// --no-loops: every loop pattern off (BRAINSTEM_LOOP_*=0), so no session has a loop detector: the signals' figures
// without it, to set beside a default run's (bench/README.md, Loops).
// --shared-tree: every session in this repository's git work tree, so each status (each signal's answer) carries the
// warning naming the 999 others; by default they work in a directory outside any git work tree.
// BENCH_PROFILE=<dir>: CPU profiles of the baseline's load and of the signals' (health.cpuprofile, signals.cpuprofile,
// sampled every 200 µs), for bench/profile-summary.ts.
// 1,000 live session actors (a process-less runtime), N signals (default 100,000) from 50 concurrent
// keep-alive connections on a real listener (autocannon, in a worker thread so it does not share the
// service's event loop). Every request carries a credential and every answer must be 200: anything else
// stops the bench. Prints figures.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gc } from './gc';
import { LoadResult, load } from './http-load';
import { EventBus } from '../src/bus/event-bus';
import { RuntimeCatalog } from '../src/sessions/runtimes/runtime-catalog';
import { InertRuntime } from '../test/support/inert-runtime';
import { startTestApp } from '../test/support/test-app';
import { tempDir } from '../test/support/temp-dir';

const SIGNALS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 100_000);
const NO_LOOPS = process.argv.includes('--no-loops');
const SHARED_TREE = process.argv.includes('--shared-tree');
const LOOPS_OFF = { BRAINSTEM_LOOP_REPEATED_CALL: '0', BRAINSTEM_LOOP_ALTERNATION: '0', BRAINSTEM_LOOP_REPEATED_FAILURE: '0', BRAINSTEM_LOOP_REPEATED_TEXT: '0', BRAINSTEM_LOOP_NO_PROGRESS_S: '0' };
const SESSIONS = 1000;
const CLIENTS = 50;


/**
 * Server-side residence of each request (request parsed → response written), taken from Node's own
 * http diagnostics channels: what the service costs, without the load generator's queueing on the shared cores.
 */
function serverLatency(): { stop: () => { p50: number; p99: number } } {
  const started = new WeakMap<IncomingMessage, number>();
  const lat: number[] = [];
  const onStart = (m: unknown) => started.set((m as { request: IncomingMessage }).request, performance.now());
  const onFinish = (m: unknown) => {
    const t0 = started.get((m as { request: IncomingMessage; response: ServerResponse }).request);
    if (t0 !== undefined) lat.push(performance.now() - t0);
  };
  subscribe('http.server.request.start', onStart);
  subscribe('http.server.response.finish', onFinish);
  return {
    stop: () => {
      unsubscribe('http.server.request.start', onStart);
      unsubscribe('http.server.response.finish', onFinish);
      lat.sort((a, b) => a - b);
      const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
      return { p50: q(0.5), p99: q(0.99) };
    },
  };
}

/** Profiles `run` into BENCH_PROFILE/<name>.cpuprofile when that is set; runs it plainly otherwise. */
async function profiled<T>(name: string, run: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PROFILE;
  if (!dir) return run();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  const result = await run();
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
  session.disconnect();
  return result;
}

const line = (label: string, r: LoadResult) =>
  console.log(
    `${label.padEnd(34)} ${Math.round((r.requests / r.ms) * 1000).toLocaleString('en-US').padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms   max ${r.max.toFixed(1).padStart(6)} ms`,
  );

async function main(): Promise<void> {
  const sync = process.env.BRAINSTEM_JOURNAL_SYNC ?? 'true';
  const t = await startTestApp({ BRAINSTEM_MAX_SESSIONS: String(SESSIONS * 2), BRAINSTEM_JOURNAL_SYNC: sync, ...(NO_LOOPS ? LOOPS_OFF : {}) }, { listen: true });
  t.app.get(RuntimeCatalog).register(new InertRuntime());
  const outside = tempDir('bench-sessions-');
  const cwd = SHARED_TREE ? process.cwd() : outside.path;
  console.log(`sessions bench: ${SESSIONS} session actors, ${SIGNALS.toLocaleString('en-US')} signals, ${CLIENTS} concurrent HTTP clients (autocannon), journal fsync ${sync === 'true' ? 'on' : 'off'}, loop detection ${NO_LOOPS ? 'off' : 'on'}, ${SHARED_TREE ? 'every session in one git work tree (each warned of the others)' : 'no git work tree'}`);
  // The baseline: the cheapest route there is, with the user's credential checked as every request's is.
  const health = (total: number) => load({ url: t.url, method: 'GET', total, connections: CLIENTS, requests: [{ path: '/api/v1/health', token: t.token }], expect: 200 });

  // Warm the HTTP path and the JIT before measuring memory and load.
  await health(5000);
  await gc();
  const before = process.memoryUsage();
  const ids: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'inert', cwd, title: `bench ${i}` } });
    if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`);
    // A session that is not live would answer every signal with 409: the figures would measure refusals.
    if (res.json().state === 'exited') throw new Error(`session ${i} exited at creation: ${res.body}`);
    ids.push(res.json().id);
  }
  await gc();
  const after = process.memoryUsage();
  const perActor = (k: 'rss' | 'heapUsed') => (after[k] - before[k]) / SESSIONS / 1024;
  console.log(`memory per idle session actor: ${perActor('rss').toFixed(1)} KB resident, ${perActor('heapUsed').toFixed(1)} KB heap (after gc; includes the journal's per-stream index)`);

  // Measured in the service as the signals are, so both pay the probe's cost.
  const healthProbe = serverLatency();
  const baseline = await profiled('health', () => health(SIGNALS));
  const healthInService = healthProbe.stop();
  line('baseline GET /health', baseline);
  console.log(`  in the service (request parsed → response written): p50 ${healthInService.p50.toFixed(2)} ms   p99 ${healthInService.p99.toFixed(2)} ms`);

  const statuses = ['working', 'completed', 'needs_review', 'working'];
  // Each worker signals with its own credential, as a real one does.
  const requests = ids.map((id, i) => ({
    path: `/api/v1/coding-sessions/${id}/signals`,
    token: t.tokenOf({ worker: id }),
    body: JSON.stringify({ type: 'report_progress', status: statuses[i % statuses.length], message: `tick from ${i}` }),
  }));
  let published = 0;
  const counting = t.app.get(EventBus).ofType('session.progress').subscribe(() => published++);
  const server = serverLatency();
  const signals = await profiled('signals', () => load({ url: t.url, method: 'POST', total: SIGNALS, connections: CLIENTS, requests, expect: 200 }));
  const inService = server.stop();
  counting.unsubscribe();
  line('POST /coding-sessions/{id}/signals', signals);
  console.log(`  in the service (request parsed → journaled + published → response written): p50 ${inService.p50.toFixed(2)} ms   p99 ${inService.p99.toFixed(2)} ms`);
  console.log(`  session.progress events journaled and published during the run: ${published.toLocaleString('en-US')} of ${SIGNALS.toLocaleString('en-US')} signals`);
  if (published !== SIGNALS) throw new Error(`${published} of ${SIGNALS} signals were published: the figures above do not count`);
  console.log(`signals throughput ${((signals.requests / signals.ms) * 1000 / ((baseline.requests / baseline.ms) * 1000) * 100).toFixed(0)}% of the health baseline; every signal journaled and published before its response`);
  await t.close();
  outside.remove();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
