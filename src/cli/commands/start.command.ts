import { resolve } from 'node:path';
import type { SessionStatus } from '../../sessions/session.status';
import { stringFlag } from '../cli-context';
import { apiCommand, printJson } from './command';

export const startCommand = apiCommand({
  name: 'start',
  synopsis: '[--runtime <runtime>] [--cwd <folder>] [--title <title>] [--profile <profile id>] [--json] [<prompt>]',
  summary: "start a worker (claude-code, codex, gemini-cli, opencode) in a folder, with a first prompt; without --cwd, the profile's folder",
  options: { runtime: { type: 'string' }, cwd: { type: 'string' }, title: { type: 'string' }, profile: { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 0, max: 1 },
  run: async (p, api, ctx) => {
    const cwd = stringFlag(p, 'cwd');
    const fields = {
      runtime: stringFlag(p, 'runtime'),
      // The service runs elsewhere: a relative folder is the one this command runs in.
      cwd: cwd === undefined ? undefined : resolve(ctx.cwd, cwd),
      title: stringFlag(p, 'title'),
      profile_id: stringFlag(p, 'profile'),
      prompt: p.positionals[0],
    };
    const body = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    const status = await api.call<SessionStatus>('POST', '/coding-sessions', body);
    if (p.values.json) printJson(ctx, status);
    else ctx.io.out(`started ${status.alias} (${status.id}): ${status.runtime} in ${status.cwd}, ${status.state}${status.exit_reason ? ` (${status.exit_reason})` : ''}`);
    return 0;
  },
});
