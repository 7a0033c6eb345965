import { ParseArgsConfig, parseArgs } from 'node:util';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

/** What a command reads and writes: the process's own by default, a test's in a spec. */
export interface CliContext {
  io: CliIo;
  env: NodeJS.ProcessEnv;
  /** The folder relative paths (`--cwd .`) are taken from. */
  cwd: string;
  /** The interactive commands' terminal (chat, logs -f). */
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
}

/** The exit codes, as docs/reference/cli.md lists them. */
export const EXIT = {
  ok: 0,
  /** The service refused or failed the request (its code and message are printed), or the command failed. */
  failed: 1,
  /** Bad usage: an unknown command or flag, a missing or malformed argument. */
  usage: 2,
  /** The service could not be reached: not running, or not at that URL. */
  unreachable: 3,
} as const;

/** A command's flags as node:util parseArgs takes them. */
export type Options = NonNullable<ParseArgsConfig['options']>;

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/**
 * Strict: an unknown flag, a flag without its value, or (unless --help is asked for) too many or too few positionals
 * is an error naming what was wrong (printed with the command's usage, exit 2), never silently ignored.
 */
export function parseCommand(args: readonly string[], options: Options, positionals: { min: number; max: number }): Parsed | { error: string } {
  let parsed: Parsed;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true }) as Parsed;
  } catch (e) {
    return { error: (e as Error).message.split('. ')[0] };
  }
  const n = parsed.positionals.length;
  if (parsed.values.help) return parsed;
  if (n < positionals.min) return { error: 'missing argument' };
  if (n > positionals.max) return { error: `unexpected argument ${JSON.stringify(parsed.positionals[positionals.max])}` };
  return parsed;
}

/** The value of a string flag (parseArgs gives strings for `type: 'string'`). */
export const stringFlag = (p: Parsed, name: string): string | undefined => {
  const v = p.values[name];
  return typeof v === 'string' ? v : undefined;
};
