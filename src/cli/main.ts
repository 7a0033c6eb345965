import { journalCli } from './journal.cli';
import { mcpCli } from './mcp.cli';
import { tokenCli } from './token.cli';

const USAGE = `usage: brainstem <command>
  journal verify|replay|tail --dir <path>   inspect a stopped journal (or --url postgres://… for one in PostgreSQL)
  mcp [--url http://127.0.0.1:4820]         MCP on stdio, forwarded to the running service
  token [--brain]                           print the user's (or the main brain's) token`;

/** Entry point of the `brainstem` command. */
export async function main(argv: readonly string[]): Promise<number> {
  // A reader that has gone away (`| head`) wants no more: stop quietly, as command-line tools do.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  const io = { out: (l: string) => process.stdout.write(l + '\n'), err: (l: string) => process.stderr.write(l + '\n') };
  if (argv[0] === 'journal') return journalCli(argv.slice(1), io);
  if (argv[0] === 'mcp') return mcpCli(argv.slice(1), io);
  if (argv[0] === 'token') return tokenCli(argv.slice(1), io);
  io.err(USAGE);
  return 2;
}
