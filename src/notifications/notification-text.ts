import { NotificationKind } from '../config/notify-config';
import { LIMIT_KEY, Notice } from './notification-rules';
import { ActionTarget, WaitingItem } from './notification-triggers';

/**
 * What a notification says, pure: which session (alias, title, runtime), why (a permission with its command or file, a
 * question, a block, a stall, a loop, a budget, the brain asking, a gate confirmation), where its card is in the
 * dashboard, and what can be done from it. Plain text only: every channel shows it as text, never as markup.
 */

export interface SessionInfo {
  id: string;
  alias: string;
  title: string;
  runtime: string;
}

export type ActionName = 'allow' | 'deny' | 'confirm' | 'refuse';

export const ACTION_LABELS: Readonly<Record<ActionName, string>> = { allow: 'Allow', deny: 'Deny', confirm: 'Confirm', refuse: 'Refuse' };

export interface ActionSpec {
  action: ActionName;
  label: string;
  target: ActionTarget;
}

export interface Composed {
  kind: NotificationKind | 'digest';
  key: string;
  session: SessionInfo | null;
  title: string;
  text: string;
  /** The dashboard's place for it: a hash route of the page. */
  card: string;
  actions: ActionSpec[];
}

const TITLE_CHARS = 120;
const LINE_CHARS = 300;
const TEXT_CHARS = 1500;

const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
/** One line: a worker's text may hold line breaks, which would read as more lines of ours. */
const line = (s: string, n = LINE_CHARS): string => cut(s.replace(/\s+/g, ' ').trim(), n);

/** Until when a parked session waits ("until 04:10 UTC (usage limit)"), from its item: the reset as ISO, or none. */
function untilText(w: WaitingItem): string {
  const when = w.detail ? `until ${w.detail.slice(11, 16)} UTC` : 'until resumed';
  return `${when} (${w.subject ?? 'usage limit'})`;
}

/** Workers parked at their limit, as one notice: how many, and until when the last parked waits. */
function limitNotice(notice: Notice, lookup: (sessionId: string) => SessionInfo | null): Composed {
  const items = notice.items;
  const last = items[items.length - 1];
  const aliases = items.map((w) => (w.session_id ? (lookup(w.session_id)?.alias ?? w.session_id) : '?'));
  const title = items.length === 1 ? `${aliases[0]} ${SHORT.limit(last)}` : `${items.length} workers paused ${untilText(last)}`;
  return { kind: 'limit', key: notice.key, session: null, title: cut(title, TITLE_CHARS), text: cut(`${line(aliases.join(', '))}: ${items.length === 1 ? 'it resumes by itself' : 'they resume by themselves'} at the reset`, TEXT_CHARS), card: '#/', actions: [] };
}

const SHORT: Readonly<Record<NotificationKind, (w: WaitingItem) => string>> = {
  permission: (w) => `wants to use ${w.subject ?? 'a tool'}`,
  question: () => 'asks you a question',
  blocked: () => 'is blocked',
  stall: () => 'has stalled',
  loop: () => 'seems to be looping',
  budget: (w) => (w.subject === 'exceeded' ? 'reached its budget and is held' : 'is near its budget'),
  limit: (w) => `paused ${untilText(w)}`,
  brain_question: () => 'asks you',
  confirmation: (w) => `waits for your confirmation${w.subject ? ` (${w.subject})` : ''}`,
};

const WHY: Readonly<Record<NotificationKind, (w: WaitingItem) => string>> = {
  permission: (w) => `Permission for ${w.subject ?? 'a tool'}: ${w.detail}`,
  question: (w) => `Question: ${w.detail}`,
  blocked: (w) => `Blocked: ${w.detail}`,
  stall: (w) => `Stalled${w.subject ? ` (${w.subject})` : ''}: ${w.detail}`,
  loop: (w) => `Looping: ${w.detail}`,
  budget: (w) => `Budget: ${w.detail}`,
  limit: (w) => `Paused ${untilText(w)}; it resumes by itself`,
  brain_question: (w) => `The main brain asks: ${w.detail}`,
  confirmation: (w) => `Confirm${w.subject ? ` ${w.subject}` : ''}: ${w.detail}`,
};

export const whyOf = (w: WaitingItem): string => line(WHY[w.kind](w));

function who(session: SessionInfo | null): string {
  return session ? session.alias : 'The main brain';
}

function sessionLine(session: SessionInfo | null): string {
  return session ? line(`Session ${session.alias} · ${session.title || 'untitled'} · ${session.runtime}`) : 'The main brain';
}

/** The dashboard's card of a thing: the session's card, the gate's confirmation in the main chat, or the chat. */
export function cardOf(w: WaitingItem | null): string {
  if (!w) return '#/';
  if (w.session_id) return `#/?session=${encodeURIComponent(w.session_id)}`;
  if (w.target?.kind === 'confirmation') return `#/chat?confirmation=${encodeURIComponent(w.target.confirmation_id)}`;
  return '#/chat';
}

function actionsOf(items: readonly WaitingItem[]): ActionSpec[] {
  const first = items.find((w) => w.target !== null);
  if (!first?.target) return [];
  const names: ActionName[] = first.target.kind === 'permission' ? ['allow', 'deny'] : ['confirm', 'refuse'];
  return names.map((action) => ({ action, label: ACTION_LABELS[action], target: first.target as ActionTarget }));
}

export function compose(notice: Notice, lookup: (sessionId: string) => SessionInfo | null): Composed {
  const items = notice.items;
  if (notice.digest) {
    const lines = items.map((w) => `${w.session_id ? (lookup(w.session_id)?.alias ?? w.session_id) : 'main brain'}: ${whyOf(w)}`);
    return { kind: 'digest', key: notice.key, session: null, title: `${items.length} things wait on you`, text: cut(lines.join('\n'), TEXT_CHARS), card: '#/', actions: [] };
  }
  if (notice.key === LIMIT_KEY && items.length > 0) return limitNotice(notice, lookup);
  const last = items[items.length - 1] ?? null;
  const session = last?.session_id ? lookup(last.session_id) : null;
  const kind = last?.kind ?? 'question';
  if (items.length <= 1) {
    return {
      kind,
      key: notice.key,
      session,
      title: cut(`${who(session)} ${last ? SHORT[kind](last) : 'needs you'}`, TITLE_CHARS),
      text: cut([sessionLine(session), ...(last ? [whyOf(last)] : [])].join('\n'), TEXT_CHARS),
      card: cardOf(last),
      actions: actionsOf(items),
    };
  }
  return {
    kind,
    key: notice.key,
    session,
    title: cut(`${who(session)}: ${items.length} things wait on you`, TITLE_CHARS),
    text: cut([sessionLine(session), ...items.map(whyOf)].join('\n'), TEXT_CHARS),
    card: cardOf(items.find((w) => w.target !== null) ?? last),
    actions: actionsOf(items),
  };
}
