import { DEFAULT_SERVICE_URL, runStdioBridge } from '../mcp/mcp-stdio-bridge';
import { userToken } from './token.cli';

interface Io {
  err: (line: string) => void;
}

const USAGE = 'usage: brainstem mcp [--url http://127.0.0.1:4820]   (env: BRAINSTEM_TOKEN, a worker\'s or the brain\'s own credential; else the user token)';

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
  // A worker (BRAINSTEM_SESSION_ID set) uses its own credential or none: never the user's token file.
  const token = env.BRAINSTEM_TOKEN || (env.BRAINSTEM_SESSION_ID ? null : userToken(env));
  await runStdioBridge({ url, sessionId: env.BRAINSTEM_SESSION_ID || undefined, token: token ?? undefined, log: io.err });
  return 0;
}
