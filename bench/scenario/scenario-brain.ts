import type { MessagesRequest, ModelReply } from '../../test/support/fake-anthropic-api';

/**
 * The scripted main brain of the scenario bench: what the fake model API answers to the hosted brain's claude. It
 * reads only what the prompt says: a round's id (rd_…), the sessions it names (cs_…) and permission request ids
 * (perm_…), each request id taken for the session named last before it. Per session it does what the session's role
 * calls for (answer, go on, allow, merge), once per round, then completes the round. The same script runs against any
 * round prompt that names them.
 */
export type WorkerRole = 'turns' | 'asker' | 'permission' | 'loop' | 'merge' | 'claude' | 'quiet';

/** A role's sends at most per session over the run (a claude worker's every turn would wake a round again); then it is stopped. */
const SEND_CAP: Partial<Record<WorkerRole, number>> = { claude: 2 };

export interface BrainCall {
  tool: string;
  input: Record<string, unknown>;
}

type Block = { type?: string; text?: unknown; tool_use_id?: unknown; content?: unknown; is_error?: unknown };

/** The last user message of a request: its text, and whether it carries tool results. */
export function lastUser(request: Pick<MessagesRequest, 'messages'>): { text: string; toolResult: boolean; error: string | null } {
  const last = (request.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user').pop();
  if (!last) return { text: '', toolResult: false, error: null };
  if (typeof last.content === 'string') return { text: last.content, toolResult: false, error: null };
  const blocks = Array.isArray(last.content) ? (last.content as Block[]) : [];
  const results = blocks.filter((b) => b.type === 'tool_result');
  const failed = results.find((b) => b.is_error === true);
  return {
    text: blocks.map((b) => (typeof b.text === 'string' ? b.text : '')).join('\n'),
    toolResult: results.length > 0,
    error: failed ? JSON.stringify(failed.content) : null,
  };
}

/** The round a prompt is for, the sessions it names in order, and each session's permission request ids. */
export function readRoundPrompt(text: string): { round_id: string; sessions: string[]; permissions: Map<string, string[]> } | null {
  const round = /\brd_[a-z0-9]+/.exec(text);
  if (!round) return null;
  const sessions: string[] = [];
  const permissions = new Map<string, string[]>();
  let current: string | null = null;
  // From its reasons on (else the round on): a new conversation's kept summary and a round's board list every session,
  // not what to act on.
  const reasons = text.indexOf('Why you were woken:', round.index);
  for (const m of text.slice(reasons >= 0 ? reasons : round.index).matchAll(/\b(cs|perm)_[a-z0-9]+/g)) {
    if (m[1] === 'cs') {
      current = m[0];
      if (!sessions.includes(current)) sessions.push(current);
    } else if (current) {
      const ids = permissions.get(current) ?? [];
      if (!ids.includes(m[0])) permissions.set(current, [...ids, m[0]]);
    }
  }
  return { round_id: round[0], sessions, permissions };
}

export class ScenarioBrain {
  private plan: ModelReply[] = [];
  private readonly sends = new Map<string, number>();
  private readonly merges = new Set<string>();
  private readonly stops = new Set<string>();
  /** The round the brain works on, and the calls it made in it (the bench reads them). */
  round: string | null = null;
  readonly calls = new Map<string, BrainCall[]>();
  /** What Brainstem answered the brain's calls that failed (a tool result marked is_error). */
  readonly errors: string[] = [];

  constructor(private readonly roleOf: (session: string) => WorkerRole | undefined) {}

  reply(request: Pick<MessagesRequest, 'messages'>): ModelReply {
    const last = lastUser(request);
    if (last.toolResult && last.error !== null && this.round) {
      this.errors.push(`${this.round}: ${last.error.slice(0, 300)}`);
      // No permission pending (the prompt named the session for its turn's end, not a request): it is told to go on.
      const previous = this.calls.get(this.round)?.at(-1);
      // Nothing to merge yet (named before its commit): asked again when named next.
      if (previous?.tool === 'merge_session' && last.error.includes('nothing_to_merge')) this.merges.delete(String(previous.input.session));
      if (previous?.tool === 'resolve_permission' && last.error.includes('permission_not_pending')) {
        this.plan.unshift({ tool: 'mcp__brainstem__send_to_session', input: { session: previous.input.session, text: 'Go on with the next step.' } });
      }
    }
    if (!last.toolResult) {
      const round = readRoundPrompt(last.text);
      if (!round) return { text: 'Noted.' };
      this.round = round.round_id;
      this.calls.set(round.round_id, []);
      this.plan = [...this.actions(round), { tool: 'mcp__brainstem__complete_round', input: { round_id: round.round_id, summary: `Handled ${round.sessions.length} sessions.` } }, { text: 'Round done.' }];
    }
    const next = this.plan.shift() ?? { text: 'Round done.' };
    if ('tool' in next && this.round) this.calls.get(this.round)!.push({ tool: next.tool.replace('mcp__brainstem__', ''), input: next.input });
    return next;
  }

  private actions(round: NonNullable<ReturnType<typeof readRoundPrompt>>): ModelReply[] {
    const tool = (name: string, input: Record<string, unknown>): ModelReply => ({ tool: `mcp__brainstem__${name}`, input });
    return round.sessions.flatMap((session): ModelReply[] => {
      const role = this.roleOf(session);
      if (!role || role === 'quiet') return [];
      if (role === 'permission') {
        const ids = round.permissions.get(session) ?? [];
        return ids.length ? ids.map((request_id) => tool('resolve_permission', { session, decision: 'allow', request_id })) : [tool('resolve_permission', { session, decision: 'allow' })];
      }
      if (role === 'merge') {
        // Asked once: the user confirms or refuses it, and a second ask would be refused as nothing to merge.
        if (this.merges.has(session)) return [];
        this.merges.add(session);
        return [tool('merge_session', { session, action: 'merge', strategy: 'merge' })];
      }
      const sent = this.sends.get(session) ?? 0;
      if (sent >= (SEND_CAP[role] ?? Infinity)) {
        // Named again after its last message: its work is done, so it is stopped (the person confirms), once.
        if (this.stops.has(session)) return [];
        this.stops.add(session);
        return [tool('stop_session', { session })];
      }
      this.sends.set(session, sent + 1);
      const text = role === 'asker' ? 'Use option A.' : role === 'loop' ? 'Stop retrying; skip the flaky test and go on.' : 'Go on with the next step.';
      return [tool('send_to_session', { session, text })];
    });
  }
}
