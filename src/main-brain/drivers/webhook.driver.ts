import { RoundDriver } from '../../supervision/round-driver.port';
import { RoundView } from '../../supervision/round.view';

/** A brain answers with a short summary; a larger answer is cut off there, so whatever it sends, memory stays bounded. */
export const WEBHOOK_ANSWER_LIMIT_BYTES = 1024 * 1024;

/** POSTs the round as JSON; the round ends with the response, whose optional `summary` is recorded. */
export function webhookDriver(url: string, serviceUrl: () => string): RoundDriver {
  return {
    name: 'webhook',
    deliver: async (round: RoundView, signal: AbortSignal) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ round, service_url: serviceUrl() }),
        signal,
      });
      const text = await readCapped(res, WEBHOOK_ANSWER_LIMIT_BYTES);
      if (!res.ok) throw new Error(`webhook answered ${res.status}: ${text.slice(0, 200)}`);
      let summary = '';
      try {
        const body = JSON.parse(text) as { summary?: unknown };
        if (typeof body.summary === 'string') summary = body.summary;
      } catch {
        summary = text.slice(0, 4000);
      }
      return { summary: summary || `webhook answered ${res.status}` };
    },
  };
}

/** The body as text, or a failure once it passes `limit` bytes (the rest is not read: the connection is dropped). */
async function readCapped(res: Response, limit: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks).toString('utf8');
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`webhook answered ${res.status} with more than ${limit} bytes; the answer was cut off there`);
    }
    chunks.push(value);
  }
}
