import { CliContext, EXIT } from './cli-context';
import { approveCommand } from './commands/approve.command';
import { chatCommand } from './commands/chat.command';
import { hooksCommand } from './commands/hooks.command';
import { runHook } from './claude-hook';
import { Command, usageOf } from './commands/command';
import { doctorCommand } from './commands/doctor.command';
import { logsCommand } from './commands/logs.command';
import { lsCommand } from './commands/ls.command';
import { releaseCommand } from './commands/release.command';
import { resumeCommand } from './commands/resume.command';
import { sendCommand } from './commands/send.command';
import { serveCommand } from './commands/serve.command';
import { showCommand } from './commands/show.command';
import { startCommand } from './commands/start.command';
import { statusCommand } from './commands/status.command';
import { superviseCommand } from './commands/supervise.command';
import { journalCli } from './journal.cli';
import { mcpCli } from './mcp.cli';
import { tokenCli } from './token.cli';

/** The commands that work on a stopped service or beside it: this machine, the journal on disk, MCP on stdio, the token file. */
const LOCAL: readonly Command[] = [
  doctorCommand,
  {
    name: 'journal',
    synopsis: 'verify|replay|tail --dir <path>',
    summary: 'inspect a stopped journal (or --url postgres://… for one in PostgreSQL)',
    run: async (args, ctx) => journalCli(args, ctx.io, ctx.env),
  },
  { name: 'mcp', synopsis: '[--url <service URL>]', summary: 'MCP on stdio, forwarded to the running service', run: (args, ctx) => mcpCli(args, ctx.io, ctx.env) },
  { name: 'token', synopsis: '[--brain]', summary: "print the user's (or the main brain's) token", run: async (args, ctx) => tokenCli(args, ctx.io, ctx.env) },
  {
    name: 'hook',
    synopsis: '<event> --url <service URL> --token-file <file>',
    summary: 'what claude runs for each hook event once `hooks install` put it in its settings (the event comes on stdin)',
    run: async (args, ctx) => {
      await runHook(args, { stdin: ctx.stdin, env: ctx.env, write: (t) => ctx.stdout.write(t) });
      return EXIT.ok;
    },
  },
];

export const COMMANDS: readonly Command[] = [
  serveCommand,
  statusCommand,
  lsCommand,
  showCommand,
  logsCommand,
  sendCommand,
  approveCommand,
  releaseCommand,
  resumeCommand,
  superviseCommand,
  chatCommand,
  startCommand,
  hooksCommand,
  ...LOCAL,
];

export function usage(): string {
  return [
    'usage: brainstem <command> [arguments]',
    ...COMMANDS.flatMap((c) => [`  ${usageOf(c)}`, `      ${c.summary}`]),
    '',
    'The commands that call the service take --url (else BRAINSTEM_URL, else the configured host and port) and read your',
    'token from BRAINSTEM_API_TOKEN or the data directory. Listings take --json. `brainstem <command> --help` for one.',
    'Exit codes: 0 done, 1 the service refused (its code and message are printed) or the command failed, 2 bad usage,',
    '3 the service could not be reached.',
  ].join('\n');
}

const processContext = (): CliContext => ({
  io: { out: (l) => process.stdout.write(l + '\n'), err: (l) => process.stderr.write(l + '\n') },
  env: process.env,
  cwd: process.cwd(),
  stdin: process.stdin,
  stdout: process.stdout,
});

/**
 * Entry point of the `brainstem` command: the exit code, or null when the command keeps running (serve) and ends the
 * process itself.
 */
export async function main(argv: readonly string[], ctx: CliContext = processContext()): Promise<number | null> {
  const [name, ...args] = argv;
  const command = COMMANDS.find((c) => c.name === name);
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? ctx.io.err : ctx.io.out)(usage());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (!command) {
    ctx.io.err(`brainstem: unknown command ${JSON.stringify(name)}\n${usage()}`);
    return EXIT.usage;
  }
  if (command !== serveCommand && ctx.stdout === process.stdout) {
    // A reader that has gone away (`| head`) wants no more: stop quietly, as command-line tools do.
    process.stdout.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(0);
      throw e;
    });
  }
  return command.run(args, ctx);
}
