import { CliContext, EXIT, Options, Parsed, parseCommand } from '../cli-context';
import { CliFailure, ServiceClient, serviceUrl } from '../service-client';
import { userCredential } from '../token.cli';

/** A subcommand of `brainstem`. Resolves with the exit code, or null when it keeps running and ends the process itself. */
export interface Command {
  name: string;
  /** Its arguments, as `brainstem <name> <synopsis>` in the usage. */
  synopsis: string;
  /** What it does, in a few words. */
  summary: string;
  run(args: readonly string[], ctx: CliContext): Promise<number | null>;
}

export const usageOf = (c: Pick<Command, 'name' | 'synopsis'>): string => `brainstem ${c.name}${c.synopsis ? ` ${c.synopsis}` : ''}`;

export interface ApiCommandSpec {
  name: string;
  synopsis: string;
  summary: string;
  options?: Options;
  positionals?: { min: number; max: number };
  run(p: Parsed, api: ServiceClient, ctx: CliContext): Promise<number>;
}

/** `--url`: where the service is; `-h`: the usage. Every command that calls the service takes both. */
const SHARED: Options = { url: { type: 'string' }, help: { type: 'boolean', short: 'h' } };

/** Prints a usage error with the command's usage: exit 2. */
export function usageError(ctx: CliContext, name: string, error: string, usage: string): number {
  ctx.io.err(`brainstem ${name}: ${error}\nusage: ${usage}`);
  return EXIT.usage;
}

/** A command over the service's REST API: strict flags, the service's URL and the user's token, failures printed. */
export function apiCommand(spec: ApiCommandSpec): Command {
  const usage = `${usageOf(spec)} [--url <service URL>]\n  ${spec.summary}`;
  return {
    name: spec.name,
    synopsis: spec.synopsis,
    summary: spec.summary,
    run: async (args, ctx) => {
      const p = parseCommand(args, { ...SHARED, ...spec.options }, spec.positionals ?? { min: 0, max: 0 });
      if ('error' in p) return usageError(ctx, spec.name, p.error, usage);
      if (p.values.help) {
        ctx.io.out(`usage: ${usage}`);
        return EXIT.ok;
      }
      try {
        const url = serviceUrl(typeof p.values.url === 'string' ? p.values.url : undefined, ctx.env);
        return await spec.run(p, new ServiceClient(url, userCredential(ctx.env)), ctx);
      } catch (e) {
        if (!(e instanceof CliFailure)) throw e;
        if (e.code === EXIT.usage) return usageError(ctx, spec.name, e.message, usage);
        ctx.io.err(`brainstem ${spec.name}: ${e.message}`);
        return e.code;
      }
    },
  };
}

/** Prints a value as JSON, for `--json`. */
export function printJson(ctx: CliContext, value: unknown): void {
  ctx.io.out(JSON.stringify(value, null, 2));
}

/** A session's id or alias as a path segment. */
export const sessionPath = (id: string): string => `/coding-sessions/${encodeURIComponent(id)}`;
