import type { Readiness } from '../../http/readiness.controller';
import type { Confirmation } from '../../main-brain/confirmation.decider';
import type { SessionStatus } from '../../sessions/session.status';
import type { AutonomousView } from '../../supervision/supervision.view';
import { columns, oneLine } from '../terminal-text';
import { pendingSummary, supervisionLine } from '../session-format';
import { apiCommand, printJson } from './command';
import { allSessions } from './ls.command';

/** What `brainstem status` reports (and prints as JSON). */
export interface StatusReport {
  url: string;
  ready: Readiness;
  supervision: AutonomousView | null;
  sessions: { total: number; by_state: Record<string, number> };
  /** Sessions waiting on a person (a permission or a question), and the brain's held calls. */
  waiting: { sessions: Array<Pick<SessionStatus, 'id' | 'alias' | 'state' | 'pending'>>; confirmations: Array<Pick<Confirmation, 'id' | 'tool' | 'description'>> };
}

export function statusLines(r: StatusReport): string[] {
  const byState = Object.entries(r.sessions.by_state).map(([state, n]) => `${n} ${state}`);
  const brain = r.ready.brain;
  const rows = [
    ['service', `${r.url}, node ${r.ready.lease.node} (${r.ready.lease.role}), journal at seq ${r.ready.journal.head_seq}`],
    ['brain', `${brain.driver}${brain.runtime ? ` on ${brain.runtime}` : ''}${brain.hosted ? (brain.connected ? ', running' : ', not running') : ''}`],
    ['supervision', supervisionLine(r.supervision)],
    ['sessions', r.sessions.total === 0 ? 'none' : `${r.sessions.total}: ${byState.join(', ')}`],
    ...r.waiting.sessions.map((s) => ['waits on you', `${s.alias}: ${pendingSummary(s.pending)}`]),
    ...r.waiting.confirmations.map((c) => ['waits on you', `held call ${c.id} (${c.tool}): ${oneLine(c.description)}`]),
  ];
  return columns(rows);
}

export const statusCommand = apiCommand({
  name: 'status',
  synopsis: '[--json]',
  summary: 'the service, the brain, supervision, the sessions by state, and what waits on you',
  options: { json: { type: 'boolean' } },
  run: async (p, api, ctx) => {
    const [ready, { autonomous }, sessions, { confirmations }] = await Promise.all([
      api.call<Readiness>('GET', '/ready'),
      api.call<{ autonomous: AutonomousView | null }>('GET', '/session-os/main-brain/autonomous'),
      allSessions(api),
      api.call<{ confirmations: Confirmation[] }>('GET', '/session-os/main-brain/confirmations?status=pending'),
    ]);
    const byState: Record<string, number> = {};
    for (const s of sessions) byState[s.state] = (byState[s.state] ?? 0) + 1;
    const report: StatusReport = {
      url: api.url,
      ready,
      supervision: autonomous,
      sessions: { total: sessions.length, by_state: byState },
      waiting: {
        sessions: sessions.filter((s) => s.state === 'pending_authorization' || s.state === 'pending_decision').map(({ id, alias, state, pending }) => ({ id, alias, state, pending })),
        confirmations: confirmations.map(({ id, tool, description }) => ({ id, tool, description })),
      },
    };
    if (p.values.json) printJson(ctx, report);
    else statusLines(report).forEach((l) => ctx.io.out(l));
    return 0;
  },
});
