import { PricedUsage, TOKEN_KINDS, UsageTotals, addTotals, addUsage, dayOf, emptyTotals, roundUsd, tokensOf } from './usage.model';

/**
 * Usage totals folded from the journal: by session, profile, day, brain conversation and workflow run. A read model: it
 * decides nothing, and it is rebuilt from its snapshot and the events after it (usage.service.ts). Pure: events in,
 * sums out. Days are UTC dates, kept per session, per profile and per conversation, so a range of days is summed from
 * them and never from the events.
 */

export type UsageGroup = 'session' | 'profile' | 'day' | 'brain' | 'workflow';
export const USAGE_GROUPS: readonly UsageGroup[] = ['session', 'profile', 'day', 'brain', 'workflow'];

/** The events the projection folds, as the journal stores them. */
export const USAGE_EVENT_TYPES: ReadonlySet<string> = new Set(['session.created', 'session.usage', 'brain.usage', 'workflow.started']);

type Days = Record<string, UsageTotals>;

interface SessionUsage {
  /** The turn of its last usage event: the next one with another turn is a new turn. */
  last_turn: number;
  alias: string;
  title: string;
  runtime: string;
  profile_id: string | null;
  totals: UsageTotals;
  days: Days;
}

interface ConversationUsage {
  last_turn: string | null;
  runtime: string | null;
  totals: UsageTotals;
  days: Days;
}

/** The projection's whole state as plain JSON: what its snapshot holds. */
export interface UsageState {
  /** The format of the snapshot, so a later one can tell an older one from its own. */
  format: 1;
  sessions: Record<string, SessionUsage>;
  /** The sessions in the order they were created: the order of a report by session (a snapshot keeps arrays' order). */
  order: string[];
  /** Per profile and day; a profile's totals are the sum over its days. */
  profiles: Record<string, Days>;
  /** Per day: every worker's, and the brain's. */
  days: Record<string, { workers: UsageTotals; brain: UsageTotals }>;
  /** Per brain conversation (its runtime's id; `(none)` for a turn before the runtime named it). */
  brain: Record<string, ConversationUsage>;
  runs: Record<string, { name: string; session_ids: string[] }>;
}

export const emptyUsageState = (): UsageState => ({ format: 1, sessions: {}, order: [], profiles: {}, days: {}, brain: {}, runs: {} });

/** The stored event the projection reads: its type, its data, when it was journaled, and its stream. */
export interface UsageSourceEvent {
  type: string;
  stream: string;
  at: string;
  data: unknown;
}

const NO_CONVERSATION = '(none)';
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const addDay = (days: Days, day: string, entry: PricedUsage, newTurn: boolean): void => {
  days[day] = addUsage(days[day] ?? emptyTotals(), entry, newTurn);
};

/**
 * The priced usage a `session.usage` or `brain.usage` event carries, or null when it is not one (the journal was
 * written by hand, or by a later version): counted wrong, it would corrupt every total it is in.
 */
export function entryOf(d: Record<string, unknown>): PricedUsage | null {
  for (const k of TOKEN_KINDS) if (typeof d[k] !== 'number' || !Number.isFinite(d[k]) || (d[k] as number) < 0) return null;
  if (typeof d.cost_usd !== 'number' || !Number.isFinite(d.cost_usd) || d.cost_usd < 0) return null;
  return {
    model: str(d.model),
    input_tokens: d.input_tokens as number,
    output_tokens: d.output_tokens as number,
    cache_read_tokens: d.cache_read_tokens as number,
    cache_write_tokens: d.cache_write_tokens as number,
    cost_usd: d.cost_usd,
    cost_estimated: d.cost_estimated === true,
  };
}

/** Folds one event in place (the projection owns its state; snapshots copy it). Events of other types are ignored. */
export function foldUsage(s: UsageState, e: UsageSourceEvent): void {
  const d = (e.data ?? {}) as Record<string, unknown>;
  switch (e.type) {
    case 'session.created': {
      const id = str(d.id);
      if (id === null || s.sessions[id]) return;
      s.sessions[id] = { last_turn: 0, alias: str(d.alias) ?? '', title: str(d.title) ?? '', runtime: str(d.runtime) ?? '', profile_id: str(d.profile_id), totals: emptyTotals(), days: {} };
      s.order.push(id);
      return;
    }
    case 'session.usage': {
      const session = e.stream.startsWith('session-') ? s.sessions[e.stream.slice('session-'.length)] : undefined;
      const entry = entryOf(d);
      if (!session || !entry) return;
      const turn = typeof d.turn === 'number' ? d.turn : session.last_turn + 1;
      const newTurn = turn !== session.last_turn;
      session.last_turn = turn;
      const day = dayOf(typeof d.at === 'number' ? d.at : Date.parse(e.at));
      session.totals = addUsage(session.totals, entry, newTurn);
      addDay(session.days, day, entry, newTurn);
      if (session.profile_id !== null) addDay((s.profiles[session.profile_id] ??= {}), day, entry, newTurn);
      const today = (s.days[day] ??= { workers: emptyTotals(), brain: emptyTotals() });
      today.workers = addUsage(today.workers, entry, newTurn);
      return;
    }
    case 'brain.usage': {
      const entry = entryOf(d);
      if (!entry) return;
      const day = dayOf(Date.parse(e.at));
      const c = (s.brain[str(d.conversation_id) ?? NO_CONVERSATION] ??= { last_turn: null, runtime: str(d.runtime), totals: emptyTotals(), days: {} });
      const turn = str(d.turn_id);
      const newTurn = turn === null || turn !== c.last_turn;
      c.last_turn = turn;
      c.totals = addUsage(c.totals, entry, newTurn);
      addDay(c.days, day, entry, newTurn);
      const today = (s.days[day] ??= { workers: emptyTotals(), brain: emptyTotals() });
      today.brain = addUsage(today.brain, entry, newTurn);
      return;
    }
    case 'workflow.started': {
      const run = d.run as { id?: unknown; name?: unknown; session_ids?: unknown } | undefined;
      const id = str(run?.id);
      if (id === null) return;
      const ids = Array.isArray(run?.session_ids) ? run.session_ids.filter((x): x is string => typeof x === 'string') : [];
      s.runs[id] = { name: str(run?.name) ?? id, session_ids: ids };
      return;
    }
  }
}

/** A range of UTC days, each end included; null ends are open. */
export interface DayRange {
  since: string | null;
  until: string | null;
}

const inRange = (day: string, r: DayRange): boolean => (r.since === null || day >= r.since) && (r.until === null || day <= r.until);
const open = (r: DayRange): boolean => r.since === null && r.until === null;

/** The days of the range summed, into one object (a range over 10,000 sessions sums tens of thousands of days). */
function sumDays(days: Days, r: DayRange): UsageTotals {
  const t = emptyTotals();
  for (const day in days) {
    if (!inRange(day, r)) continue;
    const d = days[day];
    t.turns += d.turns;
    t.input_tokens += d.input_tokens;
    t.output_tokens += d.output_tokens;
    t.cache_read_tokens += d.cache_read_tokens;
    t.cache_write_tokens += d.cache_write_tokens;
    t.cost_usd += d.cost_usd;
    t.cost_estimated ||= d.cost_estimated;
  }
  t.cost_usd = roundUsd(t.cost_usd);
  return t;
}

export type UsageRow = UsageTotals & { tokens: number } & Record<string, unknown>;

/** A row's totals and their sum of tokens, set on a row made with its own fields (a report can hold tens of thousands). */
function row<F extends Record<string, unknown>>(fields: F, t: UsageTotals): UsageRow & F {
  const r = fields as F & Partial<UsageRow>;
  r.turns = t.turns;
  r.input_tokens = t.input_tokens;
  r.output_tokens = t.output_tokens;
  r.cache_read_tokens = t.cache_read_tokens;
  r.cache_write_tokens = t.cache_write_tokens;
  r.tokens = tokensOf(t);
  r.cost_usd = t.cost_usd;
  r.cost_estimated = t.cost_estimated;
  return r as UsageRow & F;
}

/** A session's totals in the range (all of them when it is open). */
export function sessionTotals(s: UsageState, id: string, r: DayRange = { since: null, until: null }): UsageTotals {
  const session = s.sessions[id];
  if (!session) return emptyTotals();
  return open(r) ? session.totals : sumDays(session.days, r);
}

const byKey = <T>(o: Record<string, T>): Array<[string, T]> => Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The rows of a report grouped by `group`, over the days of the range; groups with nothing used in it are left out.
 * Sessions come in the order they were created, days in order, profiles, conversations and runs by their ids.
 */
export function usageRows(s: UsageState, group: UsageGroup, r: DayRange): UsageRow[] {
  const out: UsageRow[] = [];
  const push = (fields: Record<string, unknown>, t: UsageTotals) => {
    if (t.turns > 0) out.push(row(fields, t));
  };
  switch (group) {
    case 'session':
      for (const id of s.order) {
        const x = s.sessions[id];
        push({ session_id: id, alias: x.alias, title: x.title, runtime: x.runtime, profile_id: x.profile_id }, open(r) ? x.totals : sumDays(x.days, r));
      }
      return out;
    case 'profile':
      for (const [id, days] of byKey(s.profiles)) push({ profile_id: id }, sumDays(days, r));
      return out;
    case 'day':
      for (const [day, x] of byKey(s.days)) {
        if (inRange(day, r)) push({ day, workers: { ...x.workers, tokens: tokensOf(x.workers) }, brain: { ...x.brain, tokens: tokensOf(x.brain) } }, addTotals(x.workers, x.brain));
      }
      return out;
    case 'brain':
      for (const [id, c] of byKey(s.brain)) push({ conversation_id: id === NO_CONVERSATION ? null : id, runtime: c.runtime }, sumDays(c.days, r));
      return out;
    case 'workflow':
      for (const [id, run] of byKey(s.runs)) push({ run_id: id, name: run.name, session_ids: run.session_ids }, run.session_ids.reduce((t, sid) => addTotals(t, sessionTotals(s, sid, r)), emptyTotals()));
      return out;
  }
}

/** Every worker's and the brain's usage on one day. */
export function dayTotals(s: UsageState, day: string): { workers: UsageTotals; brain: UsageTotals; all: UsageTotals } {
  const d = s.days[day];
  if (!d) return { workers: emptyTotals(), brain: emptyTotals(), all: emptyTotals() };
  return { workers: d.workers, brain: d.brain, all: addTotals(d.workers, d.brain) };
}

/** What the sessions of a profile used on one day. */
export const profileDayTotals = (s: UsageState, profileId: string, day: string): UsageTotals => s.profiles[profileId]?.[day] ?? emptyTotals();
