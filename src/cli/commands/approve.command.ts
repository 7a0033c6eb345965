import type { SessionStatus } from '../../sessions/session.status';
import { stringFlag } from '../cli-context';
import { pendingSummary } from '../session-format';
import { apiCommand, printJson, sessionPath } from './command';

export const approveCommand = apiCommand({
  name: 'approve',
  synopsis: '<session> [--deny <reason>] [--request <request id>] [--scope once|session|profile] [--json]',
  summary: "allow the session's pending permission request (the oldest, or --request), or deny it with a reason; --scope: how far a Network allow reaches",
  options: { deny: { type: 'string' }, request: { type: 'string' }, scope: { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  run: async (p, api, ctx) => {
    const path = sessionPath(p.positionals[0]);
    const reason = stringFlag(p, 'deny');
    // The request shown is the one answered: named by its id, a request raised meanwhile is not answered by mistake.
    const before = await api.call<SessionStatus>('GET', path);
    const pending = before.pending?.kind === 'permission' ? before.pending : null;
    const requestId = stringFlag(p, 'request') ?? pending?.request_id;
    // The service judges the scope (only a Network request takes one).
    const scope = stringFlag(p, 'scope');
    const body = { decision: reason === undefined ? 'allow' : 'deny', ...(reason ? { reason } : {}), ...(requestId ? { request_id: requestId } : {}), ...(scope ? { scope } : {}) };
    const status = await api.call<SessionStatus>('POST', `${path}/permission`, body);
    if (p.values.json) printJson(ctx, status);
    else {
      const which = requestId === pending?.request_id && pending ? pendingSummary(pending) : `permission ${requestId}`;
      ctx.io.out(`${reason === undefined ? 'allowed' : 'denied'} ${status.alias}'s ${which}; it is ${status.state}`);
    }
    return 0;
  },
});
