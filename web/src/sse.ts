import { authHeader } from './api';
import { SseMessage, parseSse } from './sse-parse';

export type StreamStatus = 'connecting' | 'live' | 'reconnecting' | 'unauthorized';

export interface FollowOptions {
  token: () => string | null;
  onMessage: (message: SseMessage) => void;
  onStatus: (status: StreamStatus) => void;
  /** Called on every (re)connection that answered 200, before its messages. */
  onOpen?: (resumed: boolean) => void;
}

/**
 * Follows an SSE endpoint with fetch streaming, so the token goes in the Authorization header (an EventSource
 * cannot send one, and a token in the URL would land in logs). After a drop it reconnects with Last-Event-ID,
 * so nothing journaled meanwhile is missed. Returns a function that stops it.
 */
export function followStream(path: string, options: FollowOptions): () => void {
  const abort = new AbortController();
  let lastId: string | null = null;
  let delay = 500;
  const run = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      const current = options.token();
      if (current === null) {
        options.onStatus('unauthorized');
        return;
      }
      try {
        const headers: Record<string, string> = { ...authHeader(current), accept: 'text/event-stream' };
        if (lastId !== null) headers['last-event-id'] = lastId;
        const res = await fetch(path, { headers, signal: abort.signal });
        if (res.status === 401) {
          options.onStatus('unauthorized');
          return;
        }
        if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
        options.onStatus('live');
        options.onOpen?.(lastId !== null);
        delay = 500;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const { messages, rest } = parseSse(buffer + value);
          buffer = rest;
          for (const message of messages) {
            if (message.id !== undefined) lastId = message.id;
            options.onMessage(message);
          }
        }
      } catch {
        if (abort.signal.aborted) return;
      }
      options.onStatus('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 15_000);
    }
  };
  void run();
  return () => abort.abort();
}
