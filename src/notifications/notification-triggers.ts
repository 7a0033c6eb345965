import { NotificationKind } from '../config/notify-config';
import { BudgetScope, BudgetUnit, describeCrossing } from '../usage/budget.rules';

/**
 * Which bus events make something wait on the person, and which settle it. Pure: an event in, signals out. Matched by
 * `type` (replayed and followed events are plain objects).
 *
 * The table is the place a new kind starts: a row here (a `wait` of that kind), and everything after it (rules, text,
 * channels, settings) already knows the kind.
 */

/** What an action answers: one permission request of one session, or one confirmation of the human gate. */
export type ActionTarget = { kind: 'permission'; session_id: string; request_id: string } | { kind: 'confirmation'; confirmation_id: string };

/** One thing waiting on the person. */
export interface WaitingItem {
  /** Unique among the things waiting: `permission:<request id>`, `question:<session id>`, … */
  item: string;
  kind: NotificationKind;
  session_id: string | null;
  /** What an Allow/Deny or Confirm/Refuse answers; null when only Open applies. */
  target: ActionTarget | null;
  /** What it is about, as data: the tool, the command or file, the question, the reason. Never markup. */
  subject: string | null;
  detail: string;
  at: number;
}

export type Signal =
  | { type: 'wait'; item: WaitingItem }
  | { type: 'settle'; item: string }
  /** The session went back to work or exited: what it waited on is over (its permissions and its limit too once it exited). */
  | { type: 'settle_session'; session_id: string; permissions: boolean }
  /** The person spoke in the main chat: the brain's questions to them are answered. */
  | { type: 'settle_kind'; kind: NotificationKind };

export interface BusEvent {
  type: string;
  stream: string;
  at: string;
  seq: number;
  data: unknown;
}

type Row = (e: BusEvent, d: Record<string, unknown>, session: string | null) => Signal[];

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const sessionOf = (stream: string): string | null => (stream.startsWith('session-') ? stream.slice('session-'.length) : null);

/** A permission's input as a person reads it: the command, the file, or the input as JSON. */
export function describeInput(input: unknown): string {
  if (input && typeof input === 'object' && !Array.isArray(input)) {
    const o = input as Record<string, unknown>;
    if (typeof o.command === 'string') return o.command;
    for (const key of ['file_path', 'path', 'notebook_path', 'url', 'pattern']) if (typeof o[key] === 'string') return `${key === 'url' ? 'URL' : 'file'} ${o[key] as string}`;
  }
  return JSON.stringify(input ?? null);
}

const wait = (item: WaitingItem): Signal[] => [{ type: 'wait', item }];

/** A budget a turn took past 80% (`warning`) or to its limit (`exceeded`, the session held), in Brainstem's words. */
function budgetWait(e: BusEvent, d: Record<string, unknown>, s: string | null, level: 'warning' | 'exceeded'): Signal[] {
  if (s === null || typeof d.used !== 'number' || typeof d.limit !== 'number' || d.limit <= 0) return [];
  const detail = describeCrossing({ scope: d.scope as BudgetScope, unit: d.unit as BudgetUnit, level, used: d.used, limit: d.limit });
  return wait({ item: `budget:${s}`, kind: 'budget', session_id: s, target: null, subject: level, detail, at: Date.parse(e.at) });
}

export const TRIGGERS: Readonly<Record<string, Row>> = {
  'session.permission_requested': (e, d, s) =>
    s === null
      ? []
      : wait({
          item: `permission:${text(d.request_id)}`,
          kind: 'permission',
          session_id: s,
          target: { kind: 'permission', session_id: s, request_id: text(d.request_id) },
          subject: text(d.tool),
          detail: describeInput(d.input),
          at: Date.parse(e.at),
        }),
  'session.permission_resolved': (_e, d) => [{ type: 'settle', item: `permission:${text(d.request_id)}` }],
  'session.asked_human': (e, d, s) =>
    s === null ? [] : wait({ item: `question:${s}`, kind: 'question', session_id: s, target: null, subject: null, detail: text(d.question), at: Date.parse(e.at) }),
  'session.blocked': (e, d, s) =>
    s === null ? [] : wait({ item: `blocked:${s}`, kind: 'blocked', session_id: s, target: null, subject: null, detail: text(d.reason), at: Date.parse(e.at) }),
  'session.progress': (e, d, s) =>
    s === null || d.status !== 'blocked'
      ? []
      : wait({ item: `blocked:${s}`, kind: 'blocked', session_id: s, target: null, subject: null, detail: text(d.message) || 'reported blocked', at: Date.parse(e.at) }),
  'session.state_changed': (_e, d, s) =>
    s === null || (d.to !== 'working' && d.to !== 'exited') ? [] : [{ type: 'settle_session', session_id: s, permissions: d.to === 'exited' }],
  // A loop or a budget waits until the session moves on, exits, or the user releases its hold.
  'session.loop_detected': (e, d, s) =>
    s === null ? [] : wait({ item: `loop:${s}`, kind: 'loop', session_id: s, target: null, subject: text(d.pattern), detail: text(d.summary), at: Date.parse(e.at) }),
  'session.budget_warning': (e, d, s) => budgetWait(e, d, s, 'warning'),
  'session.budget_exceeded': (e, d, s) => budgetWait(e, d, s, 'exceeded'),
  // Parked at its model's limit: one item per session, which the limit's key merges into one notice per episode.
  'session.parked': (e, d, s) =>
    s === null
      ? []
      : wait({
          item: `limit:${s}`,
          kind: 'limit',
          session_id: s,
          target: null,
          subject: d.reason === 'rate_limit' ? 'rate limit' : 'usage limit',
          detail: typeof d.resumes_at === 'number' ? new Date(d.resumes_at).toISOString() : '',
          at: Date.parse(e.at),
        }),
  'session.unparked': (_e, _d, s) => (s === null ? [] : [{ type: 'settle', item: `limit:${s}` }]),
  'session.released': (_e, _d, s) =>
    s === null
      ? []
      : [
          { type: 'settle', item: `loop:${s}` },
          { type: 'settle', item: `budget:${s}` },
        ],
  'supervision.stall_detected': (e, d) => {
    const s = text(d.session_id);
    const minutes = Math.round(Number(d.stalled_for_s) / 60);
    return wait({ item: `stall:${s}`, kind: 'stall', session_id: s, target: null, subject: text(d.kind), detail: `waiting for ${minutes} min`, at: Date.parse(e.at) });
  },
  'confirmation.requested': (e, d) =>
    wait({
      item: `confirmation:${text(d.id)}`,
      kind: 'confirmation',
      session_id: null,
      target: { kind: 'confirmation', confirmation_id: text(d.id) },
      subject: text(d.tool),
      detail: text(d.description),
      at: Date.parse(e.at),
    }),
  'confirmation.confirmed': (_e, d) => [{ type: 'settle', item: `confirmation:${text(d.id)}` }],
  'confirmation.refused': (_e, d) => [{ type: 'settle', item: `confirmation:${text(d.id)}` }],
  'confirmation.expired': (_e, d) => [{ type: 'settle', item: `confirmation:${text(d.id)}` }],
  /**
   * The brain asking the person: what it posts with reply_to_human (a brain message outside a hosted turn). The person
   * answering in the chat settles it.
   */
  'chat.message': (e, d) => {
    if (d.role === 'user') return [{ type: 'settle_kind', kind: 'brain_question' }];
    if (d.role !== 'brain' || d.kind !== 'message' || d.turn_id !== undefined) return [];
    return wait({ item: `brain:${e.seq}`, kind: 'brain_question', session_id: null, target: null, subject: null, detail: text(d.text), at: Date.parse(e.at) });
  },
};

/** The signals of one bus event; none for an event no row names. */
export function signalsOf(e: BusEvent): Signal[] {
  const row = TRIGGERS[e.type];
  if (!row) return [];
  const d = e.data && typeof e.data === 'object' ? (e.data as Record<string, unknown>) : {};
  return row(e, d, sessionOf(e.stream));
}
