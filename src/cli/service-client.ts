import { ClientRequest, IncomingMessage, RequestOptions, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ConfigError, loadConfig } from '../config/config.loader';
import { urlOf } from '../config/service-url';
import { EXIT } from './cli-context';
import { SseMessage, SseParser } from './sse-parser';

/** A command that cannot go on: its message is printed and the process exits with `code`. */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
    this.name = 'CliFailure';
  }
}

/** The service answered an error: its status, its code (errors.md) and its message. */
export class ServiceError extends CliFailure {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
  ) {
    super(`${status} ${errorCode}: ${message}`, EXIT.failed);
  }
}

/** Connection errors that mean nothing listens there (or no longer). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT']);

/** A wildcard bind is reached on loopback. */
const LOOPBACK_OF: Record<string, string> = { '0.0.0.0': '127.0.0.1', '::': '::1' };

/** The service's base URL: `--url`, else BRAINSTEM_URL, else the configuration's host and port. */
export function serviceUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const given = flag ?? (env.BRAINSTEM_URL || undefined);
  if (given !== undefined) {
    const name = flag !== undefined ? '--url' : 'BRAINSTEM_URL';
    let url: URL;
    try {
      url = new URL(given);
    } catch {
      throw new CliFailure(`${name}: not a URL: ${JSON.stringify(given)}`, EXIT.usage);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliFailure(`${name}: expected an http:// or https:// URL, got ${JSON.stringify(given)}`, EXIT.usage);
    return given.replace(/\/+$/, '');
  }
  let server: { host: string; port: number };
  try {
    server = loadConfig(env, []).server;
  } catch (e) {
    if (e instanceof ConfigError) throw new CliFailure(`cannot tell where the service listens: ${e.message}`, EXIT.failed);
    throw e;
  }
  if (server.port === 0) throw new CliFailure('the configured port is 0 (the service picks one at start): give --url or BRAINSTEM_URL', EXIT.usage);
  return urlOf(LOOPBACK_OF[server.host] ?? server.host, server.port);
}

/** The REST API of a running service, as the user. */
export class ServiceClient {
  private readonly headers: Record<string, string>;

  constructor(
    readonly url: string,
    private readonly credential: { token: string | null; from: string },
  ) {
    this.headers = credential.token ? { authorization: `Bearer ${credential.token}` } : {};
  }

  /** A JSON request under /api/v1; the answer's body, or a ServiceError with the service's code and message. */
  async call<T>(method: 'GET' | 'POST', path: string, body?: object): Promise<T> {
    const payload = body ? JSON.stringify(body) : undefined;
    const headers = payload ? { ...this.headers, 'content-type': 'application/json' } : this.headers;
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = this.request(path, { method, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', (e) => reject(this.connectionFailure(e)));
      });
      req.on('error', (e) => reject(this.connectionFailure(e)));
      req.end(payload);
    });
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new CliFailure(`${this.url} answered ${status} with something other than JSON: is it a Brainstem service?`, EXIT.failed);
    }
    if (status >= 400) throw this.errorOf(status, json);
    return json as T;
  }

  /**
   * Follows an SSE route under /api/v1, handing each message to `on.message` (after `on.open`, once the service has
   * accepted it), until the service closes the stream (it resolves) or `signal` aborts it (it resolves too).
   */
  stream(path: string, on: { message: (m: SseMessage) => void; open?: () => void }, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = this.request(path, { headers: { ...this.headers, accept: 'text/event-stream' }, signal }, (res) => {
        res.setEncoding('utf8');
        if (res.statusCode !== 200) {
          let text = '';
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            let json: unknown = null;
            try {
              json = JSON.parse(text);
            } catch {
              // Not ours: errorOf says so.
            }
            reject(this.errorOf(res.statusCode ?? 0, json));
          });
          return;
        }
        const parser = new SseParser();
        on.open?.();
        res.on('data', (chunk: string) => parser.push(chunk).forEach(on.message));
        res.on('end', resolve);
        res.on('error', (e) => (signal?.aborted ? resolve() : reject(this.connectionFailure(e))));
      });
      req.on('error', (e) => (signal?.aborted ? resolve() : reject(this.connectionFailure(e))));
      req.end();
    });
  }

  /**
   * Node's http rather than fetch: fetch refuses some ports outright (its "bad ports") and gives up on a body silent
   * for 5 minutes, as an output stream may well be.
   */
  private request(path: string, options: RequestOptions, onResponse: (res: IncomingMessage) => void): ClientRequest {
    const target = new URL(`${this.url}/api/v1${path}`);
    return (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, options, onResponse);
  }

  private errorOf(status: number, json: unknown): CliFailure {
    const body = json as { code?: unknown; message?: unknown } | null;
    if (!body || typeof body.code !== 'string' || typeof body.message !== 'string') {
      return new CliFailure(`${this.url} answered ${status} without a Brainstem error: is it a Brainstem service?`, EXIT.failed);
    }
    // A refused credential: say which one was sent, the usual cause being a token of another data directory.
    const hint = status === 401 ? (this.credential.token ? ` (the token came from ${this.credential.from})` : ` (no token: nothing in ${this.credential.from})`) : '';
    return new ServiceError(status, body.code, body.message + hint);
  }

  private connectionFailure(e: unknown): CliFailure {
    const code = (e as NodeJS.ErrnoException).code;
    if (code && UNREACHABLE.has(code)) {
      return new CliFailure(`no Brainstem service answers at ${this.url} (${code}): start it with \`brainstem serve\`, or give its URL with --url or BRAINSTEM_URL`, EXIT.unreachable);
    }
    return new CliFailure(`cannot reach ${this.url}: ${(e as Error).message}${code ? ` (${code})` : ''}`, EXIT.unreachable);
  }
}
