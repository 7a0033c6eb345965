import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import type { HooksChange, Installation } from '../../external/claude-hooks.installer';
import { CliContext, EXIT, Parsed, stringFlag } from '../cli-context';
import { CliFailure, ServiceClient } from '../service-client';
import { printable } from '../terminal-text';
import { apiCommand, printJson } from './command';

type Installed = Pick<Installation, 'scope' | 'path' | 'installed_at'>;

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
async function change(verb: 'install' | 'uninstall', p: Parsed, api: ServiceClient, ctx: CliContext): Promise<number> {
  const body = target(p, ctx);
  const path = `/external/claude-hooks/${verb}`;
  const preview = await api.call<HooksChange>('POST', path, { ...body, dry_run: true });
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
  const done = await api.call<HooksChange>('POST', path, body);
  if (json) printJson(ctx, done);
  else {
    const how = verb === 'install' ? 'installed into' : done.restored === 'original' ? 'restored, byte for byte,' : 'taken out of';
    ctx.io.out(`Brainstem's hooks ${how} ${done.path}${done.backup_path ? ` (the file as it was: ${done.backup_path})` : ''}`);
  }
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
    if (verb === 'install' || verb === 'uninstall') return change(verb, p, api, ctx);
    if (verb !== 'status') throw new CliFailure(`expected install, uninstall or status, got ${JSON.stringify(verb)}`, EXIT.usage);
    const { installs } = await api.call<{ installs: Installed[] }>('GET', '/external/claude-hooks');
    if (p.values.json) printJson(ctx, installs);
    else if (installs.length === 0) ctx.io.out("Brainstem's hooks are not installed (brainstem hooks install)");
    else for (const i of installs) ctx.io.out(`${i.scope.padEnd(8)}${i.path}  (since ${i.installed_at})`);
    return EXIT.ok;
  },
});
