import { DEFAULT_SERVICE_URL, runStdioBridge } from '../mcp/mcp-stdio-bridge';

interface Io {
  err: (line: string) => void;
}

const USAGE = 'usage: brainstem mcp [--url http://127.0.0.1:4820]   (env: BRAINSTEM_SESSION_ID for a worker, BRAINSTEM_API_TOKEN)';

/** `brainstem mcp`: serves MCP on stdio for agents whose .mcp.json uses a stdio entry. Nothing but MCP goes to stdout. */
export async function mcpCli(argv: readonly string[], io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let url = env.BRAINSTEM_URL || DEFAULT_SERVICE_URL;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--url' && argv[i + 1]) url = argv[++i];
    else if (argv[i].startsWith('--url=')) url = argv[i].slice('--url='.length);
    else {
      io.err(USAGE);
      return 2;
    }
  }
  try {
    new URL(url);
  } catch {
    io.err(`brainstem mcp: --url: not a URL: ${url}`);
    return 2;
  }
  await runStdioBridge({ url, sessionId: env.BRAINSTEM_SESSION_ID || undefined, token: env.BRAINSTEM_API_TOKEN || undefined, log: io.err });
  return 0;
}
