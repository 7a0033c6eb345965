import type { SessionStatus } from '../../sessions/session.status';
import { stringFlag } from '../cli-context';
import { ServiceClient } from '../service-client';
import { sessionTable } from '../session-format';
import { apiCommand, printJson } from './command';

/** Every session the service lists (in creation order), page after page. */
export async function allSessions(api: ServiceClient, state?: string): Promise<SessionStatus[]> {
  const sessions: SessionStatus[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: '1000', ...(state ? { state } : {}), ...(cursor ? { cursor } : {}) });
    const page: { sessions: SessionStatus[]; next_cursor: string | null } = await api.call('GET', `/coding-sessions?${query}`);
    sessions.push(...page.sessions);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return sessions;
}

export const lsCommand = apiCommand({
  name: 'ls',
  synopsis: '[--state <state>] [--json]',
  summary: 'list the sessions, or those in one state (starting, working, pending_handling, pending_authorization, pending_decision, exited)',
  options: { state: { type: 'string' }, json: { type: 'boolean' } },
  run: async (p, api, ctx) => {
    const sessions = await allSessions(api, stringFlag(p, 'state'));
    if (p.values.json) printJson(ctx, sessions);
    else sessionTable(sessions, Date.now()).forEach((l) => ctx.io.out(l));
    return 0;
  },
});
