import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ErrorCode, JSONRPCMessage, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { Readable, Writable } from 'node:stream';
import { MCP_PATH } from './mcp-http.endpoint';

export const DEFAULT_SERVICE_URL = 'http://127.0.0.1:4820';

export interface BridgeOptions {
  /** The running service's base URL; /mcp is appended. */
  url: string;
  /** BRAINSTEM_SESSION_ID: present for a worker, absent for the main brain. */
  sessionId?: string;
  /** The caller's credential (BRAINSTEM_TOKEN, else the user's token), sent as the bearer token. */
  token?: string;
  stdin?: Readable;
  stdout?: Writable;
  log?: (line: string) => void;
}

/** Header names and values the service reads; shared with tests that connect over HTTP. */
export function bridgeHeaders(sessionId: string | undefined, token: string | undefined): Record<string, string> {
  return { ...(sessionId ? { 'X-Brainstem-Session': sessionId } : {}), ...(token ? { Authorization: `Bearer ${token}` } : {}) };
}

/**
 * `brainstem mcp`: MCP on stdio, forwarded message by message to the service's streamable HTTP endpoint.
 * Forwarding JSON-RPC as is (instead of a second server with its own tool list) keeps one source of truth:
 * the service decides tools, identity and errors. A failed HTTP exchange answers the pending request with
 * a readable JSON-RPC error, so the agent sees "401 …" or "no session cs_…" instead of a silent hang.
 * Resolves when stdin closes.
 */
export async function runStdioBridge(options: BridgeOptions): Promise<void> {
  const log = options.log ?? (() => undefined);
  const endpoint = new URL(MCP_PATH, options.url);
  const upstream = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: bridgeHeaders(options.sessionId, options.token) } });
  const local = new StdioServerTransport(options.stdin, options.stdout);
  const stdin = options.stdin ?? process.stdin;

  const failed = (message: JSONRPCMessage, e: unknown) => {
    const text = describe(e);
    log(`brainstem mcp: ${endpoint.href}: ${text}`);
    if (isJSONRPCRequest(message)) {
      void local.send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.ConnectionClosed, message: `Brainstem at ${endpoint.href}: ${text}` } });
    }
  };
  // Requests still in flight when stdin ends are answered before the bridge exits (`echo req | brainstem mcp`).
  const inFlight = new Set<Promise<void>>();
  local.onmessage = (message) => {
    const sent = upstream.send(message).catch((e: unknown) => failed(message, e));
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  };
  upstream.onmessage = (message) => {
    void local.send(message);
  };
  // Closing aborts the client's listening stream, which it reports as an error: not one worth printing.
  let closing = false;
  upstream.onerror = (e) => {
    if (!closing) log(`brainstem mcp: ${e.message}`);
  };

  const closed = new Promise<void>((resolve) => {
    stdin.once('end', resolve);
    stdin.once('close', resolve);
    local.onclose = () => resolve();
  });
  await upstream.start();
  await local.start();
  await closed;
  await Promise.allSettled([...inFlight]);
  closing = true;
  await Promise.allSettled([upstream.close(), local.close()]);
}

/** fetch hides the reason in `cause` ("fetch failed" alone does not tell a stopped service from a wrong port). */
function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause instanceof Error ? e.cause.message : null;
  return cause ? `${e.message} (${cause}); is the service running there?` : e.message;
}
