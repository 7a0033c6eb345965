import { Observable } from 'rxjs';
import { NodePeers } from './node-peers.port';

/** A call to another node that did not get an answer: no URL known for it, no connection, no answer in time. */
export class PeerUnreachable extends Error {
  constructor(
    readonly node: string,
    message: string,
  ) {
    super(message);
    this.name = 'PeerUnreachable';
  }
}

/** Another node's answer with an error status, and its error body's code and message when it sent them. */
export class PeerRefused extends Error {
  constructor(
    readonly node: string,
    readonly status: number,
    readonly code: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'PeerRefused';
  }
}

/** One message of an event stream: its `event:` name (`message` when none) and its data lines joined. */
export interface PeerEvent {
  event: string;
  data: string;
}

/**
 * Splits the text of an event stream into its messages: the complete ones, and what is left of one not complete yet.
 * Comments and fields other than event and data are dropped; a message without data is none.
 */
export function parseEventStream(text: string): { events: PeerEvent[]; rest: string } {
  const events: PeerEvent[] = [];
  const blocks = text.replace(/\r\n?/g, '\n').split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length > 0) events.push({ event, data: data.join('\n') });
  }
  return { events, rest };
}

/**
 * Calls to the other nodes sharing the journal, each with this node's credential, at the URL the node advertised.
 * `timeoutMs` bounds a call until its answer's headers: a node that does not answer within it is as good as down.
 */
export class PeerClient {
  constructor(
    private readonly peers: NodePeers,
    private readonly timeoutMs: number,
  ) {}

  /** GET `path` (under /api/v1) of `node`, answered as JSON. */
  async getJson(node: string, path: string): Promise<unknown> {
    const res = await this.send(node, path, 'application/json', AbortSignal.timeout(this.timeoutMs));
    try {
      return await res.json();
    } catch (e) {
      throw new PeerUnreachable(node, `node ${node} answered ${path} with no JSON: ${(e as Error).message}`);
    }
  }

  /**
   * Opens the event stream at `path` of `node`: resolves once it answered 200, with its messages as they come. The
   * observable completes when the node ends the stream (or goes away); unsubscribing closes the connection, and so does
   * `until` when it aborts (the client that asked went away, maybe before it subscribed).
   */
  async openStream(node: string, path: string, until?: AbortSignal): Promise<Observable<PeerEvent>> {
    const abort = new AbortController();
    if (until?.aborted) abort.abort();
    until?.addEventListener('abort', () => abort.abort(), { once: true });
    const timer = setTimeout(() => abort.abort(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    let res: Response;
    try {
      res = await this.send(node, path, 'text/event-stream', abort.signal);
    } finally {
      clearTimeout(timer);
    }
    const body = res.body;
    if (body === null) throw new PeerUnreachable(node, `node ${node} answered ${path} with no body`);
    return new Observable<PeerEvent>((subscriber) => {
      const decoder = new TextDecoder();
      let pending = '';
      const reader = body.getReader();
      void (async () => {
        try {
          for (let read = await reader.read(); !read.done; read = await reader.read()) {
            const { events, rest } = parseEventStream(pending + decoder.decode(read.value, { stream: true }));
            pending = rest;
            for (const e of events) subscriber.next(e);
          }
        } catch {
          // The node went away, or this side closed the connection: the stream ends either way.
        }
        subscriber.complete();
      })();
      return () => abort.abort();
    });
  }

  private async send(node: string, path: string, accept: string, signal: AbortSignal): Promise<Response> {
    const base = this.peers.urlOf(node);
    const credential = this.peers.credential();
    if (base === null || credential === null) throw new PeerUnreachable(node, `node ${node} has advertised no address`);
    let res: Response;
    try {
      res = await fetch(`${base}/api/v1${path}`, { headers: { authorization: `Bearer ${credential}`, accept }, signal });
    } catch (e) {
      const cause = (e as { cause?: { message?: string } }).cause?.message;
      throw new PeerUnreachable(node, `node ${node} at ${base} did not answer: ${cause ?? (e as Error).message}`);
    }
    if (res.ok) return res;
    const body = (await res.json().catch(() => null)) as { code?: unknown; message?: unknown } | null;
    const message = typeof body?.message === 'string' ? body.message : `${res.status} ${res.statusText}`;
    throw new PeerRefused(node, res.status, typeof body?.code === 'string' ? body.code : null, message);
  }
}
