import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
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

/** Another node's answer with an error status, and its error body's code, message and details when it sent them. */
export class PeerRefused extends Error {
  constructor(
    readonly node: string,
    readonly status: number,
    readonly code: string | null,
    message: string,
    readonly details: Record<string, unknown> | null = null,
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

  /** GET `path` (under /api/v1) of `node`, answered as JSON; `timeoutMs` bounds it tighter (or looser) than the client's. */
  async getJson(node: string, path: string, timeoutMs = this.timeoutMs): Promise<unknown> {
    const res = await this.send(node, path, 'application/json', AbortSignal.timeout(timeoutMs));
    try {
      return await res.json();
    } catch (e) {
      throw new PeerUnreachable(node, `node ${node} answered ${path} with no JSON: ${(e as Error).message}`);
    }
  }

  /**
   * Opens the event stream at `path` of `node`: resolves once it answered 200, with its messages as they come. The
   * observable completes when the node ends the stream (or goes away); unsubscribing closes the connection, and so does
   * `until` when it aborts (the client that asked went away, maybe before it subscribed). Over node:http rather than
   * fetch, whose body times out after five quiet minutes: a worker may write nothing for longer.
   */
  async openStream(node: string, path: string, until?: AbortSignal): Promise<Observable<PeerEvent>> {
    const { url, credential } = this.target(node, path);
    const abort = new AbortController();
    if (until?.aborted) abort.abort();
    until?.addEventListener('abort', () => abort.abort(), { once: true });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
        url,
        { headers: { authorization: `Bearer ${credential}`, accept: 'text/event-stream' }, signal: abort.signal },
        (res) => {
          clearTimeout(timer);
          res.setEncoding('utf8');
          if (res.statusCode !== 200) {
            let text = '';
            res.on('data', (c: string) => (text += c.slice(0, 4096 - text.length)));
            res.on('end', () => reject(refusal(node, res.statusCode ?? 0, res.statusMessage ?? '', text)));
            res.on('error', () => reject(refusal(node, res.statusCode ?? 0, res.statusMessage ?? '', text)));
            return;
          }
          resolve(
            new Observable<PeerEvent>((subscriber) => {
              let pending = '';
              res.on('data', (chunk: string) => {
                const { events, rest } = parseEventStream(pending + chunk);
                pending = rest;
                for (const e of events) subscriber.next(e);
              });
              // The node ended the stream, went away, or this side closed the connection: it ends either way.
              res.on('close', () => subscriber.complete());
              res.on('error', () => undefined);
              return () => abort.abort();
            }),
          );
        },
      );
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(new PeerUnreachable(node, `node ${node} at ${url.origin} did not answer: ${e.message}`));
      });
      req.end();
    });
  }

  /** The URL of `path` on `node` and this node's credential; refused when the node has advertised no address. */
  private target(node: string, path: string): { url: URL; credential: string } {
    const base = this.peers.urlOf(node);
    const credential = this.peers.credential();
    if (base === null || credential === null) throw new PeerUnreachable(node, `node ${node} has advertised no address`);
    return { url: new URL(`${base}/api/v1${path}`), credential };
  }

  private async send(node: string, path: string, accept: string, signal: AbortSignal): Promise<Response> {
    const { url, credential } = this.target(node, path);
    let res: Response;
    try {
      res = await fetch(url, { headers: { authorization: `Bearer ${credential}`, accept }, signal });
    } catch (e) {
      const cause = (e as { cause?: { message?: string } }).cause?.message;
      throw new PeerUnreachable(node, `node ${node} at ${url.origin} did not answer: ${cause ?? (e as Error).message}`);
    }
    if (res.ok) return res;
    throw refusal(node, res.status, res.statusText, await res.text().catch(() => ''));
  }
}

/** An error answer of another node, with the code, message and details of its error body when it has one. */
function refusal(node: string, status: number, statusText: string, text: string): PeerRefused {
  let body: { code?: unknown; message?: unknown; details?: unknown } | null = null;
  try {
    body = JSON.parse(text) as { code?: unknown; message?: unknown; details?: unknown };
  } catch {
    body = null;
  }
  const message = typeof body?.message === 'string' ? body.message : `${status} ${statusText}`;
  const details = typeof body?.details === 'object' && body.details !== null && !Array.isArray(body.details) ? (body.details as Record<string, unknown>) : null;
  return new PeerRefused(node, status, typeof body?.code === 'string' ? body.code : null, message, details);
}
