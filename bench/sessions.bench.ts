// npm run bench:sessions [signals] — session actors under HTTP load, beside a raw baseline from the same run.
// 1,000 live session actors (a process-less runtime), N signals (default 100,000) from 50 concurrent
// keep-alive clients on a real listener; the load runs in a worker thread so it does not share the
// service's event loop. Prints figures, asserts nothing.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gc } from './gc';
import { Worker } from 'node:worker_threads';
import { EventBus } from '../src/bus/event-bus';
import { RuntimeCatalog } from '../src/sessions/runtimes/runtime-catalog';
import { InertRuntime } from '../test/support/inert-runtime';
import { startTestApp } from '../test/support/test-app';

const SIGNALS = Number(process.argv[2] ?? 100_000);
const SESSIONS = 1000;
const CLIENTS = 50;


interface LoadResult {
  requests: number;
  failures: number;
  ms: number;
  p50: number;
  p99: number;
  max: number;
}

/**
 * The load generator, plain JS in a worker thread: CLIENTS keep-alive HTTP/1.1 connections on raw sockets,
 * each one request at a time, framed by content-length (anything else counts as a failure). Node's own http
 * client cost about as much CPU as the service it measured and, on 2 shared cores, doubled the latency seen.
 */
const LOAD = `
const { workerData, parentPort } = require('node:worker_threads');
const net = require('node:net');
const { url, method, bodies, total, clients, token } = workerData;
const target = new URL(url);
const lat = new Float64Array(total);
let next = 0, failures = 0;
const CRLF = '\\r\\n';
function connection() {
  return new Promise((resolve) => {
    const sock = net.connect(Number(target.port), target.hostname);
    sock.setNoDelay(true);
    let buf = Buffer.alloc(0), i = -1, t0 = 0;
    const send = () => {
      i = next++;
      if (i >= total) return sock.end(resolve);
      const path = bodies ? target.pathname.replace(':id', bodies[i % bodies.length].id) : target.pathname;
      const payload = bodies ? bodies[i % bodies.length].body : '';
      // Each worker signals with its own credential, as a real one does.
      const auth = 'authorization: Bearer ' + (bodies ? bodies[i % bodies.length].token : token) + CRLF;
      const headers = auth + (payload ? 'content-type: application/json' + CRLF + 'content-length: ' + Buffer.byteLength(payload) + CRLF : '');
      t0 = performance.now();
      sock.write(method + ' ' + path + ' HTTP/1.1' + CRLF + 'host: ' + target.host + CRLF + headers + CRLF + payload);
    };
    sock.on('data', (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      const end = buf.indexOf(CRLF + CRLF);
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      const length = /\\r\\ncontent-length: *(\\d+)/i.exec(head);
      if (!length) {
        failures++;
        return sock.destroy();
      }
      if (buf.length < end + 4 + Number(length[1])) return;
      if (!/^HTTP\\/1\\.1 2\\d\\d /.test(head)) failures++;
      lat[i] = performance.now() - t0;
      buf = buf.subarray(end + 4 + Number(length[1]));
      send();
    });
    sock.on('connect', send);
    sock.on('error', () => resolve(failures++));
    sock.on('close', () => resolve());
  });
}
(async () => {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, connection));
  const ms = performance.now() - t0;
  const sorted = Array.from(lat).sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  parentPort.postMessage({ requests: total, failures: failures + (next < total ? total - next : 0), ms, p50: q(0.5), p99: q(0.99), max: sorted[sorted.length - 1] });
})();
`;

function load(url: string, method: string, total: number, token: string, bodies: { id: string; body: string; token: string }[] | null): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const w = new Worker(LOAD, { eval: true, workerData: { url, method, bodies, total, clients: CLIENTS, token } });
    w.once('message', (r: LoadResult) => {
      void w.terminate();
      resolve(r);
    });
    w.once('error', reject);
  });
}

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

const line = (label: string, r: LoadResult) =>
  console.log(
    `${label.padEnd(34)} ${Math.round((r.requests / r.ms) * 1000).toLocaleString('en-US').padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms   max ${r.max.toFixed(1).padStart(6)} ms   failures ${r.failures}`,
  );

async function main(): Promise<void> {
  const sync = process.env.BRAINSTEM_JOURNAL_SYNC ?? 'true';
  const t = await startTestApp({ BRAINSTEM_MAX_SESSIONS: String(SESSIONS * 2), BRAINSTEM_JOURNAL_SYNC: sync }, { listen: true });
  t.app.get(RuntimeCatalog).register(new InertRuntime());
  console.log(`sessions bench: ${SESSIONS} session actors, ${SIGNALS.toLocaleString('en-US')} signals, ${CLIENTS} concurrent HTTP clients (journal fsync ${sync === 'true' ? 'on' : 'off'})`);

  // Warm the HTTP path and the JIT before measuring memory and load.
  await load(`${t.url}/api/v1/health`, 'GET', 5000, t.token, null);
  await gc();
  const before = process.memoryUsage();
  const ids: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'inert', cwd: process.cwd(), title: `bench ${i}` } });
    if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`);
    // A session that is not live would answer every signal with 409: the figures would measure refusals.
    if (res.json().state === 'exited') throw new Error(`session ${i} exited at creation: ${res.body}`);
    ids.push(res.json().id);
  }
  await gc();
  const after = process.memoryUsage();
  const perActor = (k: 'rss' | 'heapUsed') => (after[k] - before[k]) / SESSIONS / 1024;
  console.log(`memory per idle session actor: ${perActor('rss').toFixed(1)} KB resident, ${perActor('heapUsed').toFixed(1)} KB heap (after gc; includes the journal's per-stream index)`);

  const baseline = await load(`${t.url}/api/v1/health`, 'GET', SIGNALS, t.token, null);
  line('baseline GET /health', baseline);

  const statuses = ['working', 'completed', 'needs_review', 'working'];
  const bodies = ids.map((id, i) => ({
    id,
    token: t.tokenOf({ worker: id }),
    body: JSON.stringify({ type: 'report_progress', status: statuses[i % statuses.length], message: `tick from ${i}` }),
  }));
  let published = 0;
  const counting = t.app.get(EventBus).ofType('session.progress').subscribe(() => published++);
  const server = serverLatency();
  const signals = await load(`${t.url}/api/v1/coding-sessions/:id/signals`, 'POST', SIGNALS, t.token, bodies);
  const inService = server.stop();
  counting.unsubscribe();
  line('POST /coding-sessions/{id}/signals', signals);
  console.log(`  in the service (request parsed → journaled + published → response written): p50 ${inService.p50.toFixed(2)} ms   p99 ${inService.p99.toFixed(2)} ms`);
  console.log(`  session.progress events journaled and published during the run: ${published.toLocaleString('en-US')} of ${SIGNALS.toLocaleString('en-US')} signals`);
  if (signals.failures > 0 || published !== SIGNALS) throw new Error(`${signals.failures} signal(s) failed and ${published} of ${SIGNALS} were published: the figures above do not count`);
  console.log(`signals throughput ${((signals.requests / signals.ms) * 1000 / ((baseline.requests / baseline.ms) * 1000) * 100).toFixed(0)}% of the health baseline; every signal journaled and published before its response`);
  await t.close();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
