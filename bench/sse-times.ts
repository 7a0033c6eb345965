import { request } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface SseTimes {
  /** Receipt times (performance.now()) of the messages that carry data, in order. */
  times: number[];
  /** Their data, in the same order. */
  data: string[];
  close: () => void;
  /** Resolves once n messages with data have come. */
  next: (n: number) => Promise<void>;
}

/** An SSE stream whose messages are timed as they arrive; resolves once it answered 200. */
export function sseTimes(url: string, headers: Record<string, string>): Promise<SseTimes> {
  return new Promise((done, fail) => {
    const times: number[] = [];
    const data: string[] = [];
    let waiter: { n: number; wake: () => void } | null = null;
    let buf = '';
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      if (res.statusCode !== 200) return fail(new Error(`SSE ${url} answered ${res.statusCode}`));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buf += chunk;
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const lines = buf.slice(0, i).split('\n').filter((l) => l.startsWith('data:'));
          if (lines.length > 0) {
            times.push(at);
            data.push(lines.map((l) => l.slice(5).trim()).join('\n'));
          }
          buf = buf.slice(i + 2);
        }
        if (waiter && times.length >= waiter.n) {
          const w = waiter;
          waiter = null;
          w.wake();
        }
      });
      done({
        times,
        data,
        close: () => req.destroy(),
        next: (n) => (times.length >= n ? Promise.resolve() : new Promise<void>((wake) => (waiter = { n, wake }))),
      });
    });
    req.on('error', fail);
    req.end();
  });
}

/** The p-th percentile (nearest rank) of the samples. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
