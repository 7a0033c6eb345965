import { homedir } from 'node:os';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { DomainError } from '../../common/domain-error';
import { ClaudeHooksFiles, HooksChange, HooksRequest, InstalledHooks, claudeHooksFiles } from '../../external/claude-hooks.installer';
import { CliContext, EXIT, Parsed, stringFlag } from '../cli-context';
import { CliFailure, ServiceClient } from '../service-client';
import { printable } from '../terminal-text';
import { dataDirOf } from '../token.cli';
import { apiCommand, printJson } from './command';

type Installed = Pick<InstalledHooks, 'scope' | 'path' | 'installed_at'>;

/** Where the hooks are changed and listed: the service's routes, or (the service down) the same files here. */
interface HooksPlace {
  change(verb: 'install' | 'uninstall', req: HooksRequest): Promise<HooksChange>;
  list(): Promise<Installed[]>;
}

const servicePlace = (api: ServiceClient): HooksPlace => ({
  change: (verb, req) => api.call<HooksChange>('POST', `/external/claude-hooks/${verb}`, req),
  list: async () => (await api.call<{ installs: Installed[] }>('GET', '/external/claude-hooks')).installs,
});

/**
 * The files themselves, by the service's own code (ClaudeHooksFiles), for an uninstall or a status with the service
 * down: the manifest in this configuration's data directory, the settings under this HOME. A refusal (settings claude
 * would not read, a symlink) fails the command with its code, as the service would answer it.
 */
function localPlace(files: ClaudeHooksFiles): HooksPlace {
  const refused = (e: unknown): never => {
    throw e instanceof DomainError ? new CliFailure(`${e.code}: ${e.message}`, EXIT.failed) : e;
  };
  return {
    // Only an uninstall comes here (withPlace).
    change: (_verb, req) => files.uninstall(req).catch(refused),
    list: async () => {
      try {
        return files.list();
      } catch (e) {
        return refused(e);
      }
    },
  };
}

/**
 * The service's place when it answers. When no service answers its first request, an uninstall or a status goes on
 * with the files here (said on stderr); an install does not, since only the service knows what its hooks run. A service
 * lost after it answered fails the command: what it did is not done again here.
 */
async function withPlace<T>(verb: string, api: ServiceClient, ctx: CliContext, run: (place: HooksPlace) => Promise<T>): Promise<T> {
  let answered = false;
  const service = servicePlace(api);
  const heard = <R>(p: Promise<R>) => p.then((r) => ((answered = true), r));
  try {
    return await run({ change: (v, req) => heard(service.change(v, req)), list: () => heard(service.list()) });
  } catch (e) {
    if (answered || !(e instanceof CliFailure) || e.code !== EXIT.unreachable) throw e;
    if (verb === 'install') throw new CliFailure(`${e.message}; an install needs it, since its hooks name it and its hook token`, EXIT.unreachable);
    const dir = dataDirOf(ctx.env);
    if (dir === null) throw e;
    const files = claudeHooksFiles(ctx.env.HOME || homedir(), dir);
    ctx.io.err(`brainstem hooks ${verb}: no service answers at ${api.url}: working on the files here (manifest ${files.manifestPath})`);
    return run(localPlace(files));
  }
}

/** Asks on the terminal; false when there is none to ask on. */
async function confirm(ctx: CliContext, question: string): Promise<boolean> {
  if (!(ctx.stdin as NodeJS.ReadStream).isTTY) return false;
  const rl = createInterface({ input: ctx.stdin, output: ctx.stdout });
  try {
    const answer = await new Promise<string>((r) => rl.question(question, r));
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

function target(p: Parsed, ctx: CliContext): { scope: 'user' | 'project'; project_dir?: string } {
  const scope = stringFlag(p, 'scope') ?? 'user';
  if (scope !== 'user' && scope !== 'project') throw new CliFailure(`--scope: expected user or project, got ${JSON.stringify(scope)}`, EXIT.usage);
  const project = stringFlag(p, 'project');
  if (project !== undefined && scope !== 'project') throw new CliFailure('--project goes with --scope project', EXIT.usage);
  return scope === 'user' ? { scope } : { scope, project_dir: resolve(ctx.cwd, project ?? '.') };
}

/**
 * The preview (the settings file's diff), then, once confirmed (--yes, or y on the terminal), the change itself. The
 * service writes the file: it names itself and the hook token's file in the hook commands.
 */
async function change(verb: 'install' | 'uninstall', p: Parsed, place: HooksPlace, ctx: CliContext): Promise<number> {
  const body = target(p, ctx);
  const preview = await place.change(verb, { ...body, dry_run: true });
  const json = p.values.json === true;
  if (preview.diff === '') {
    if (json) printJson(ctx, preview);
    else ctx.io.out(verb === 'install' ? `Brainstem's hooks are in ${preview.path} already: nothing to change` : `Brainstem's hooks are not in ${preview.path}: nothing to undo`);
    return EXIT.ok;
  }
  if (!json) ctx.io.out(printable(preview.diff).trimEnd());
  if (p.values['dry-run']) {
    if (json) printJson(ctx, preview);
    return EXIT.ok;
  }
  if (!p.values.yes && !(await confirm(ctx, `${verb === 'install' ? 'Write' : 'Restore'} ${preview.path}? [y/N] `))) {
    ctx.io.err(`brainstem hooks ${verb}: nothing written (confirm with --yes when there is no terminal to ask on)`);
    return EXIT.failed;
  }
  const done = await place.change(verb, body);
  if (json) printJson(ctx, done);
  else {
    const how = verb === 'install' ? 'installed into' : done.restored === 'original' ? 'restored, byte for byte,' : 'taken out of';
    ctx.io.out(`Brainstem's hooks ${how} ${done.path}${done.backup_path ? ` (the file as it was: ${done.backup_path})` : ''}`);
  }
  return EXIT.ok;
}

async function status(p: Parsed, place: HooksPlace, ctx: CliContext): Promise<number> {
  const installs = await place.list();
  if (p.values.json) printJson(ctx, installs);
  else if (installs.length === 0) ctx.io.out("Brainstem's hooks are not installed (brainstem hooks install)");
  else for (const i of installs) ctx.io.out(`${i.scope.padEnd(8)}${i.path}  (since ${i.installed_at})`);
  return EXIT.ok;
}

export const hooksCommand = apiCommand({
  name: 'hooks',
  synopsis: 'install|uninstall|status [--scope user|project] [--project <folder>] [--dry-run] [--yes] [--json]',
  summary: "put Brainstem's hooks into Claude Code's settings (or take them out), so the claude sessions you run yourself report to it",
  options: { scope: { type: 'string' }, project: { type: 'string' }, 'dry-run': { type: 'boolean' }, yes: { type: 'boolean', short: 'y' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  run: async (p, api, ctx) => {
    const [verb] = p.positionals;
    if (verb !== 'install' && verb !== 'uninstall' && verb !== 'status') throw new CliFailure(`expected install, uninstall or status, got ${JSON.stringify(verb)}`, EXIT.usage);
    // The flags are checked before the service is asked, so a usage error is one with the service down too.
    if (verb !== 'status') target(p, ctx);
    return withPlace(verb, api, ctx, (place) => (verb === 'status' ? status(p, place, ctx) : change(verb, p, place, ctx)));
  },
});
