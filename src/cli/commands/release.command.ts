import type { SessionStatus } from '../../sessions/session.status';
import { apiCommand, printJson, sessionPath } from './command';

export const releaseCommand = apiCommand({
  name: 'release',
  synopsis: '<session> [--json]',
  summary: 'release a session Brainstem held (a loop that persisted, a budget reached): it takes messages again',
  options: { json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  run: async (p, api, ctx) => {
    const status = await api.call<SessionStatus>('POST', `${sessionPath(p.positionals[0])}/release`, {});
    if (p.values.json) printJson(ctx, status);
    else ctx.io.out(`released ${status.alias}; it is ${status.state}`);
    return 0;
  },
});
