import { JournalEvent } from '../journal/journal.port';
import { NEEDS_ATTENTION, attentionReason } from './attention';
import { SessionView } from './session-directory.port';
import { BoardLine, ResolvedReason, WakeReason, wakeReason } from './supervision.machine';

/**
 * The facts a round shows, taken as it starts, pure: its reasons checked against the sessions as they are then (a
 * reason resolved meanwhile is never shown as waiting), one line per supervised session (the board), and what the
 * user and others did since the round before (Brainstem's words, never worker text). They are journaled with the
 * round, so its prompt is the same at every read and on every node.
 */

/** The most sessions a board lists; the others are counted, and list_sessions reads them. */
export const BOARD_MAX_LINES = 50;
/** The most lines "since the last round" says; the others are counted. */
export const SINCE_MAX_LINES = 20;

/** The state each reason of a session that waits needs it to still be in: the rest are events, facts of the past. */
const WAITS_IN: Readonly<Record<string, string>> = {
  pending_authorization: 'pending_authorization',
  ask_human: 'pending_decision',
  pending_decision: 'pending_decision',
  pending_handling: 'pending_handling',
  notify_blocked: 'pending_handling',
};

const stillWaits = (r: WakeReason, s: SessionView): boolean => {
  if (!s.active || s.excluded) return false;
  if (r.trigger === 'stall') return NEEDS_ATTENTION.has(s.state);
  return WAITS_IN[r.trigger] === s.state;
};

/** Whether what the session waits on now is another thing than the reason says (a new request, question or turn result). */
const waitChanged = (r: WakeReason, s: SessionView): boolean => {
  if (r.trigger === 'pending_authorization' && s.waiting_on?.kind === 'permission' && r.request_id !== undefined) return s.waiting_on.request_id !== r.request_id;
  return r.since !== undefined && Date.parse(r.since) < s.attention_since;
};

/**
 * The reasons as they stand when the round starts. A waiting reason whose session no longer waits so is dropped and
 * listed as resolved; one whose session waits on something new since is replaced by what it waits on now; an event
 * (a milestone, an exit, a loop, a budget) is kept with the session's state now. A reason of a session unknown, or a
 * system reason, is kept as it is. A waiting reason a round named already (`coveredAt`: when the round that last
 * named the session started) is dropped: the same wait, triggered twice (at a takeover and as its event arrived),
 * wakes the brain once.
 */
export function freshReasons(
  reasons: readonly WakeReason[],
  find: (id: string) => SessionView | undefined,
  coveredAt: (id: string) => number | undefined = () => undefined,
): { reasons: WakeReason[]; resolved: ResolvedReason[] } {
  const kept: WakeReason[] = [];
  const resolved: ResolvedReason[] = [];
  const seen = new Set<string>();
  const keep = (r: WakeReason) => {
    const key = `${r.session_id}:${r.trigger}`;
    if (seen.has(key)) return;
    seen.add(key);
    kept.push(r);
  };
  for (const r of reasons) {
    const s = r.session_id === '-' ? undefined : find(r.session_id);
    if (!s) {
      keep(r);
      continue;
    }
    if (!(r.trigger in WAITS_IN) && r.trigger !== 'stall') {
      keep(r.state === s.state ? r : wakeReason({ ...r, state: s.state }));
      continue;
    }
    if (!stillWaits(r, s)) {
      resolved.push({ session_id: s.id, alias: s.alias, trigger: r.trigger, state: s.state, at: s.state_since });
      continue;
    }
    const now = r.trigger === 'stall' ? null : waitChanged(r, s) ? attentionReason(s) : null;
    const shown = now ?? r;
    const covered = coveredAt(s.id);
    if (shown.trigger !== 'stall' && shown.since !== undefined && covered !== undefined && covered >= Date.parse(shown.since)) continue;
    keep(shown);
  }
  return { reasons: kept, resolved };
}

const WAITS: Readonly<Record<string, BoardLine['waits']>> = { permission: 'permission', question: 'question', blocked: 'blocked' };

/** Waiting first (the longest waiting first), then live, then exited; in alias order within each. */
function boardOrder(a: SessionView, b: SessionView): number {
  const rank = (s: SessionView) => (!s.active ? 2 : NEEDS_ATTENTION.has(s.state) ? 0 : 1);
  const byRank = rank(a) - rank(b);
  if (byRank !== 0) return byRank;
  if (rank(a) === 0 && a.attention_since !== b.attention_since) return a.attention_since - b.attention_since;
  return Number(a.alias.slice(1)) - Number(b.alias.slice(1)) || a.alias.localeCompare(b.alias);
}

function boardLine(s: SessionView): BoardLine {
  const f = s.facts;
  const waits = s.active && NEEDS_ATTENTION.has(s.state) && s.waiting_on ? WAITS[s.waiting_on.kind] : undefined;
  // Keys in sorted order, as the journal writes them; a fact with nothing to say is left out.
  return {
    alias: s.alias,
    ...(f?.budget_usd != null ? { budget_usd: f.budget_usd } : {}),
    ...(f && f.deny_rules > 0 ? { deny_rules: f.deny_rules } : {}),
    ...(f?.held ? { held: f.held } : {}),
    ...(f?.loop ? { loop: f.loop } : {}),
    ...(f?.parked ? { parked: f.parked } : {}),
    ...(f?.rate_limited_until != null ? { rate_limited_until: f.rate_limited_until } : {}),
    ...(f ? { runtime: f.runtime } : {}),
    session_id: s.id,
    since: NEEDS_ATTENTION.has(s.state) ? s.attention_since : s.state_since,
    ...(f && f.spend_usd > 0 ? { spend_usd: f.spend_usd } : {}),
    state: s.state,
    ...(f?.unsandboxed ? { unsandboxed: true as const } : {}),
    ...(waits ? { waits } : {}),
    ...(f?.worktree ? { worktree: f.worktree } : {}),
  };
}

/**
 * One line per supervised session: the live ones, and those the reasons name (an exit); at most BOARD_MAX_LINES, with
 * how many more there are.
 */
export function boardOf(sessions: readonly SessionView[], named: ReadonlySet<string>): { board: BoardLine[]; more: number } {
  const shown = sessions.filter((s) => !s.excluded && (s.active || named.has(s.id))).sort(boardOrder);
  return { board: shown.slice(0, BOARD_MAX_LINES).map(boardLine), more: Math.max(0, shown.length - BOARD_MAX_LINES) };
}

const at = (e: JournalEvent): string => e.at.slice(11, 19);
const who = (actor: string): string => (actor === 'user' ? 'the user' : actor === 'main_brain' ? 'you' : actor === 'profile' ? 'its profile' : 'Brainstem');

/**
 * One thing the user or the rest of Brainstem did, as "since the round before" says it, or null for what it does not
 * list (the brain's own calls: it made them; a worker's own signals: they are the reasons). Brainstem's words: an
 * alias, a tool's name, an id, a time; never the worker's or the user's text.
 */
export function sinceLine(e: JournalEvent, aliasOf: (sessionId: string) => string | undefined): string | null {
  const actor = e.meta.actor;
  if (actor === 'main_brain') return null;
  const d = (e.data ?? {}) as Record<string, unknown>;
  const name = (id: string | null): string => (id ? (aliasOf(id) ?? id) : 'a session');
  const s = name(e.stream.startsWith('session-') ? e.stream.slice('session-'.length) : null);
  switch (e.type) {
    case 'session.permission_resolved': {
      // The sandbox's own allows of Bash are routine, as many as the worker's commands: not listed.
      if (d.by === 'sandbox') return null;
      const by = d.by === 'profile' ? 'its profile' : who(actor);
      return `${at(e)} ${by} ${d.decision === 'allow' ? 'allowed' : 'denied'} ${s}'s request ${String(d.request_id)}`;
    }
    case 'chat.message':
      return typeof d.answer_to === 'number' && typeof d.session_id === 'string' && d.role === 'user' ? `${at(e)} the user answered ${name(d.session_id)}'s question (chat #${d.answer_to})` : null;
    case 'session.message_dispatched':
      return d.via === 'session_messages' ? `${at(e)} the user sent ${s} a message` : null;
    case 'confirmation.confirmed':
    case 'confirmation.refused':
      return `${at(e)} ${who(String(d.by))} ${e.type === 'confirmation.confirmed' ? 'confirmed' : 'refused'} held call ${String(d.id)}`;
    case 'confirmation.expired':
      return `${at(e)} held call ${String(d.id)} expired unanswered`;
    case 'session.worktree_merged':
      return `${at(e)} ${s}'s branch was merged into ${JSON.stringify(String(d.into ?? ''))}`;
    case 'session.created':
      return `${at(e)} ${who(actor)} started ${s}`;
    case 'session.exited':
      return `${at(e)} ${s} exited (${String(d.reason)})`;
    case 'session.held':
      return `${at(e)} Brainstem held ${s} (${String(d.reason)})`;
    case 'session.released':
      return `${at(e)} ${s} was released (by ${String(d.by)})`;
    default:
      return null;
  }
}

/** What "since the round before" says: its newest lines, at most SINCE_MAX_LINES, and how many more there were. */
export interface SinceLog {
  lines: string[];
  more: number;
}

export const emptySince = (): SinceLog => ({ lines: [], more: 0 });

/** The log with one more line: the oldest leaves past SINCE_MAX_LINES, and is counted. */
export function noteSince(log: SinceLog, line: string): SinceLog {
  const lines = [...log.lines, line];
  return lines.length > SINCE_MAX_LINES ? { lines: lines.slice(1), more: log.more + 1 } : { lines, more: log.more };
}

/** What the user and the rest of Brainstem did, from events in the order they were journaled (sinceLine for each). */
export function sinceLastRound(events: readonly JournalEvent[], aliasOf: (sessionId: string) => string | undefined): SinceLog {
  let log = emptySince();
  for (const e of events) {
    const line = sinceLine(e, aliasOf);
    if (line) log = noteSince(log, line);
  }
  return log;
}
