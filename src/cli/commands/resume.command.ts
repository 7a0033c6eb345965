import type { SessionStatus } from '../../sessions/session.status';
import { apiCommand, printJson, sessionPath } from './command';

export const resumeCommand = apiCommand({
  name: 'resume',
  synopsis: '<session> [--keep-parked] [--json]',
  summary: "resume a session parked at its model's usage or rate limit now, or (--keep-parked) keep it parked until you resume it",
  options: { 'keep-parked': { type: 'boolean' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  run: async (p, api, ctx) => {
    const keep = p.values['keep-parked'] === true;
    const status = await api.call<SessionStatus>('POST', `${sessionPath(p.positionals[0])}/resume`, keep ? { keep_parked: true } : {});
    if (p.values.json) printJson(ctx, status);
    else ctx.io.out(keep ? `kept ${status.alias} parked until resumed (brainstem resume ${status.alias})` : `resumed ${status.alias}; it is ${status.state}`);
    return 0;
  },
});
