import type { SessionStatus } from '../../sessions/session.status';
import { apiCommand, printJson, sessionPath } from './command';

export const sendCommand = apiCommand({
  name: 'send',
  synopsis: '<session> <text> [--json]',
  summary: 'send the worker a message (an instruction, or the answer to its question)',
  options: { json: { type: 'boolean' } },
  positionals: { min: 2, max: 2 },
  run: async (p, api, ctx) => {
    const [session, text] = p.positionals;
    const status = await api.call<SessionStatus>('POST', `${sessionPath(session)}/messages`, { text });
    if (p.values.json) printJson(ctx, status);
    else ctx.io.out(`sent to ${status.alias}; it is ${status.state}`);
    return 0;
  },
});
