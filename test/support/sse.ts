import { ClientRequest, IncomingMessage, request } from 'node:http';

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

export interface SseConnection {
  /**
   * The next `count` messages that carry data or an id (an id alone marks where a stream started), or a failure after
   * the deadline. Comments alone are skipped.
   */
  take(count: number, deadlineMs?: number): Promise<SseEvent[]>;
  close(): void;
}

/** Opens an SSE stream on a real listener; resolves once the response headers came (status 200). */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const queue: SseEvent[] = [];
    let wake: (() => void) | null = null;
    let failure: Error | null = null;
    let buf = '';
    const req: ClientRequest = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (res: IncomingMessage) => {
      if (res.statusCode !== 200) {
        reject(new Error(`SSE answered ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let idx: number;
        while ((idx = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, idx);
          buf = buf.slice(idx + 2);
          const ev: SseEvent = { data: '' };
          for (const line of block.split('\n')) {
            const [k, ...rest] = line.split(':');
            const v = rest.join(':').replace(/^ /, '');
            if (k === 'id') ev.id = v;
            else if (k === 'event') ev.event = v;
            else if (k === 'data') ev.data += v;
          }
          if (ev.data || ev.id !== undefined) queue.push(ev);
        }
        wake?.();
      });
      resolve({
        take: (count, deadlineMs = 20000) =>
          new Promise((done, fail) => {
            const timer = setTimeout(() => {
              wake = null;
              fail(new Error(`SSE: got ${queue.length} of ${count} events before the deadline`));
            }, deadlineMs);
            wake = () => {
              if (failure) fail(failure);
              else if (queue.length < count) return;
              else done(queue.splice(0, count));
              clearTimeout(timer);
              wake = null;
            };
            wake();
          }),
        close: () => req.destroy(),
      });
    });
    req.on('error', (e) => {
      failure = e;
      reject(e);
      wake?.();
    });
    req.end();
  });
}

/** Opens an SSE stream on a real listener and collects `count` events (or fails after the deadline). */
export async function readSse(url: string, count: number, headers: Record<string, string> = {}, deadlineMs = 20000): Promise<SseEvent[]> {
  const sse = await openSse(url, headers);
  try {
    return await sse.take(count, deadlineMs);
  } finally {
    sse.close();
  }
}
