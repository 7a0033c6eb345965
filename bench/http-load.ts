// The benches' HTTP load: autocannon, the Fastify ecosystem's load generator, in a worker thread so it does not share
// the service's event loop. Every request carries a credential and every answer's status is checked: the first
// unexpected one stops the load and fails the bench, naming it.
import autocannon from 'autocannon';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

export interface LoadRequest {
  path: string;
  /** The bearer token it is sent with. */
  token: string;
  /** A JSON body, for a POST. */
  body?: string;
}

export interface LoadSpec {
  /** The service's base URL (http://host:port). */
  url: string;
  method: 'GET' | 'POST';
  /** Requests in all. */
  total: number;
  /** Keep-alive connections, each one request at a time. */
  connections: number;
  /** Sent in turn, across the connections. */
  requests: LoadRequest[];
  /** The status every answer must have. */
  expect: number;
}

/** Latencies (ms) from the request written to the response read, as autocannon takes them (hrtime); throughput over `ms`. */
export interface LoadResult {
  requests: number;
  ms: number;
  p50: number;
  p99: number;
  max: number;
}

/** Runs the load in a worker thread; rejects on the first unexpected status, a connection error or a timeout. */
export function load(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(__filename, { workerData: spec });
    worker.once('message', (m: { result: LoadResult } | { error: string }) => {
      void worker.terminate();
      if ('result' in m) resolve(m.result);
      else reject(new Error(m.error));
    });
    worker.once('error', reject);
  });
}

function run(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const latencies = new Float64Array(spec.total);
    let answered = 0;
    let next = 0;
    let ended = 0;
    let unexpected: string | null = null;
    const started = performance.now();
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        pipelining: 1,
        amount: spec.total,
        requests: [
          {
            method: spec.method,
            setupRequest: (request, context) => {
              const r = spec.requests[next++ % spec.requests.length];
              (context as { path?: string }).path = r.path;
              const headers: Record<string, string> = { authorization: `Bearer ${r.token}` };
              if (r.body !== undefined) headers['content-type'] = 'application/json';
              return { ...request, path: r.path, body: r.body, headers };
            },
            // Called before the next request of its connection is set up: the context still names this one's path.
            onResponse: (status, body, context) => {
              if (status === spec.expect || unexpected !== null) return;
              unexpected = `${spec.method} ${(context as { path?: string }).path} answered ${status}, expected ${spec.expect}: ${body.slice(0, 500)}`;
              instance.stop();
            },
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        if (unexpected !== null) return reject(new Error(unexpected));
        if (result.errors > 0 || result.timeouts > 0) return reject(new Error(`${result.errors} connection error(s), ${result.timeouts} timeout(s)`));
        if (answered !== spec.total) return reject(new Error(`${answered} of ${spec.total} requests answered`));
        const sorted = Array.from(latencies).sort((a, b) => a - b);
        const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
        resolve({ requests: answered, ms: ended - started, p50: q(0.5), p99: q(0.99), max: sorted[sorted.length - 1] });
      },
    );
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
      if (answered < spec.total) latencies[answered] = responseTime;
      if (++answered === spec.total) ended = performance.now();
    });
  });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  run(workerData as LoadSpec).then(
    (result) => port.postMessage({ result }),
    (e: unknown) => port.postMessage({ error: e instanceof Error ? e.message : String(e) }),
  );
}
