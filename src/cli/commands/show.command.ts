import type { SessionStatus } from '../../sessions/session.status';
import { sessionDetail } from '../session-format';
import { apiCommand, printJson, sessionPath } from './command';

export const showCommand = apiCommand({
  name: 'show',
  synopsis: '<session> [--json]',
  summary: "one session's status: state, what it waits for, progress, exit (the session by alias, w1, or id)",
  options: { json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  run: async (p, api, ctx) => {
    const status = await api.call<SessionStatus>('GET', sessionPath(p.positionals[0]));
    if (p.values.json) printJson(ctx, status);
    else sessionDetail(status, Date.now()).forEach((l) => ctx.io.out(l));
    return 0;
  },
});
