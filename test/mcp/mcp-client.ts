import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bridgeHeaders } from '../../src/mcp/mcp-stdio-bridge';

export const BIN = resolve(__dirname, '../../bin/brainstem.js');

/** The SDK's own client over streamable HTTP, as whoever the token is (a worker's, the brain's, the user's); session is the header hint. */
export async function httpClient(url: string, opts: { session?: string; token?: string } = {}): Promise<Client> {
  const client = new Client({ name: 'brainstem-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: bridgeHeaders(opts.session, opts.token) } }));
  return client;
}

/**
 * The SDK's own client over stdio, spawning `node bin/brainstem.js mcp --url <url>`. Returned before connecting
 * so the caller can always close it (and so end the child), even when the connection is refused.
 */
export function stdioBridge(
  url: string,
  opts: { session?: string; token?: string; dataDir?: string } = {},
): { client: Client; transport: StdioClientTransport; connect(): Promise<Client> } {
  // The data directory is where the bridge looks for the user's token file when no token is given.
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', BRAINSTEM_JOURNAL_DIR: opts.dataDir ?? join(tmpdir(), 'brainstem-no-data-dir') };
  if (opts.session) env.BRAINSTEM_SESSION_ID = opts.session;
  if (opts.token) env.BRAINSTEM_TOKEN = opts.token;
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--url', url], env, stderr: 'pipe' });
  const client = new Client({ name: 'brainstem-test', version: '0.0.0' });
  return { client, transport, connect: async () => (await client.connect(transport), client) };
}

/** A tool call's JSON payload (the text content), and whether it was an error. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; text: string; json: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = res.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { isError: res.isError === true, text, json };
}

/** The text of a resource read (our resources are all text). */
export async function readText(client: Client, uri: string): Promise<string> {
  const [first] = (await client.readResource({ uri })).contents;
  return first && 'text' in first ? first.text : '';
}
