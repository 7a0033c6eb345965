import { Budget, BudgetLine, Crossing, crossings, describeCrossing, exhausted, unlimited } from '../usage/budget.rules';
import { PricedUsage, UsageTotals, addTurn } from '../usage/usage.model';
import { RateLimitStatus, SessionEvent } from './session.events';
import { SessionContext, SessionSnapshot, nextSnapshot } from './session.machine';

/**
 * A session's budgets, pure: what a turn's usage, a budget changed or a budget re-checked decides. The session decider
 * hands these commands here; the service gathers the facts (the profile's budgets, what its profile and everything
 * used today, from the usage projection). Nothing spends more than one turn past a budget: the turn that reaches a
 * limit holds the session in the same decision that records it.
 */

/** The budgets beyond the session's own, as the service read them when the command was decided. */
export interface BudgetFacts {
  /** The profile's per-session budget, for a session without one of its own. */
  profile_session: Budget | null;
  /** The profile's per-day budget and what its sessions used today (before this turn). */
  profile_day: { budget: Budget; used: UsageTotals } | null;
  /** BRAINSTEM_BUDGET_USD_PER_DAY and what everything used today (before this turn). */
  global_day: { budget: Budget; used: UsageTotals } | null;
}

export type BudgetCommand =
  | { type: 'record_usage'; at: number; entries: readonly PricedUsage[]; budgets: BudgetFacts }
  /** The session's own budget, set anew (null: its profile's applies); the hold follows it. */
  | { type: 'set_budget'; at: number; budget: Budget | null; budgets: BudgetFacts }
  /** The budgets changed elsewhere (a profile's, the day's): hold the session if one is spent, release it if none is. */
  | { type: 'check_budget'; at: number; budgets: BudgetFacts }
  | { type: 'report_rate_limit'; at: number; status: RateLimitStatus; resets_at: number | null; limit_type: string | null };

/** The session's own budget, else its profile's per-session one. */
export const sessionBudget = (c: SessionContext, f: BudgetFacts): Budget | null => (unlimited(c.budget) ? f.profile_session : c.budget);

/** The budgets that apply to the session, with what each scope used before now. */
export function budgetLines(c: Pick<SessionContext, 'usage' | 'budget'>, f: BudgetFacts): BudgetLine[] {
  const own = unlimited(c.budget) ? f.profile_session : c.budget;
  const lines: BudgetLine[] = [];
  if (own && !unlimited(own)) lines.push({ scope: 'session', budget: own, used: c.usage });
  if (f.profile_day && !unlimited(f.profile_day.budget)) lines.push({ scope: 'profile_day', ...f.profile_day });
  if (f.global_day && !unlimited(f.global_day.budget)) lines.push({ scope: 'global_day', ...f.global_day });
  return lines;
}

const crossingData = (at: number, c: Crossing) => ({ at, scope: c.scope, unit: c.unit, used: c.used, limit: c.limit });

/** The session held for a budget spent: what the user reads, in Brainstem's words. */
function holdFor(at: number, c: Crossing): SessionEvent[] {
  return [
    { type: 'session.budget_exceeded', ...crossingData(at, c) },
    { type: 'session.held', at, reason: 'budget', detail: describeCrossing(c) },
  ];
}

/** The events a budget command decides, in order; each one the state takes (a state that takes none decides none). */
export function decideBudgetCommand(state: SessionSnapshot, cmd: BudgetCommand): SessionEvent[] {
  const c = state.context;
  const { at } = cmd;
  switch (cmd.type) {
    case 'record_usage': {
      const turn = c.usage.turns + 1;
      const events: SessionEvent[] = cmd.entries.map((e) => ({ type: 'session.usage', at, turn, ...e }));
      const found = crossings(budgetLines(c, cmd.budgets), (used) => addTurn(used, cmd.entries));
      const exceeded = found.find((x) => x.level === 'exceeded');
      if (exceeded && c.held === null) events.push(...holdFor(at, exceeded));
      else if (!exceeded) events.push(...found.map((x): SessionEvent => ({ type: 'session.budget_warning', ...crossingData(at, x) })));
      return taken(state, events);
    }
    case 'set_budget':
    case 'check_budget': {
      const events: SessionEvent[] = cmd.type === 'set_budget' ? [{ type: 'session.budget_set', at, budget: cmd.budget }] : [];
      const own = cmd.type === 'set_budget' ? cmd.budget : c.budget;
      const spent = exhausted(budgetLines({ usage: c.usage, budget: own }, cmd.budgets));
      if (spent && c.held === null) events.push(...holdFor(at, spent));
      // Only a budget's hold is a budget's to lift: a loop's waits for the user.
      if (!spent && c.held?.reason === 'budget') events.push({ type: 'session.released', at, by: 'budget_raised' });
      return taken(state, events);
    }
    case 'report_rate_limit': {
      const now = c.rate_limit;
      // Reported again as it was: nothing new to record.
      if (now && now.status === cmd.status && now.resets_at === cmd.resets_at && now.limit_type === cmd.limit_type) return [];
      return taken(state, [{ type: 'session.rate_limited', at, status: cmd.status, resets_at: cmd.resets_at, limit_type: cmd.limit_type }]);
    }
  }
}

/** The events in order as far as the state takes them (an exited session takes its last usage, nothing else). */
function taken(state: SessionSnapshot, events: readonly SessionEvent[]): SessionEvent[] {
  const out: SessionEvent[] = [];
  let s = state;
  for (const e of events) {
    const next = nextSnapshot(s, e);
    if (next === null) continue;
    out.push(e);
    s = next;
  }
  return out;
}
