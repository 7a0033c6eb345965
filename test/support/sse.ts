import { request } from 'node:http';

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** Opens an SSE stream on a real listener and collects `count` events (or fails after the deadline). */
export function readSse(url: string, count: number, headers: Record<string, string> = {}, deadlineMs = 20000): Promise<SseEvent[]> {
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    let buf = '';
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
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
          if (ev.data) events.push(ev);
          if (events.length >= count) {
            clearTimeout(timer);
            req.destroy();
            resolve(events);
            return;
          }
        }
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`SSE: got ${events.length} of ${count} events before the deadline`));
    }, deadlineMs);
    req.on('error', (e) => {
      if (events.length < count) reject(e);
    });
    req.end();
  });
}
