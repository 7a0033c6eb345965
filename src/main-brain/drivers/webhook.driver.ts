import { RoundDriver } from '../../supervision/round-driver.port';
import { RoundView } from '../../supervision/supervision.service';

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
      const text = await res.text();
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
