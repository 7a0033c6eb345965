import { UsageTotals, tokensOf } from './usage.model';

/** A spending limit: tokens (all four kinds), dollars, or both; a kind left out is not limited. */
export interface Budget {
  tokens?: number;
  usd?: number;
}

/**
 * What a budget covers: one session (its own budget, else its profile's per-session one), every session of a profile
 * in a UTC day, the hosted brain in a day (BRAINSTEM_MAIN_BRAIN_BUDGET_USD), everything in a day
 * (BRAINSTEM_BUDGET_USD_PER_DAY: the workers and the brain).
 */
export type BudgetScope = 'session' | 'profile_day' | 'brain_day' | 'global_day';
export type BudgetUnit = 'tokens' | 'usd';

/** A budget that applies, and what its scope had used before the turn being counted. */
export interface BudgetLine {
  scope: BudgetScope;
  budget: Budget;
  used: UsageTotals;
}

/** A budget a turn took past 80% (`warning`) or to its limit (`exceeded`): what it covers, and by how much. */
export interface Crossing {
  scope: BudgetScope;
  unit: BudgetUnit;
  level: 'warning' | 'exceeded';
  used: number;
  limit: number;
}

/** The share of a budget at which the user and the brain are warned. */
export const WARN_AT = 0.8;
/** The largest budget taken: more is a typo, and would read as no limit at all. */
export const MAX_BUDGET_TOKENS = 1e12;
export const MAX_BUDGET_USD = 1e6;

const UNITS: readonly BudgetUnit[] = ['tokens', 'usd'];
const measure = (unit: BudgetUnit, t: UsageTotals): number => (unit === 'tokens' ? tokensOf(t) : t.cost_usd);
/** 80% or more, as a share: $0.01 of $0.0125 is 80%, though 0.8 × 0.0125 is a hair above 0.01 in floating point. */
const pastWarning = (used: number, limit: number): boolean => used / limit >= WARN_AT - 1e-9;

/** A budget with no limit in it (none at all, or `{}`). */
export const unlimited = (b: Budget | null | undefined): boolean => !b || (b.tokens === undefined && b.usd === undefined);

/**
 * What a turn does to the budgets that apply: for each limit, `exceeded` once the scope's use after the turn reaches it
 * (whether or not it had before: a worker released over its budget is held again by its next turn), `warning` when the
 * turn took it from under 80% to 80% or more.
 */
export function crossings(lines: readonly BudgetLine[], add: (t: UsageTotals) => UsageTotals): Crossing[] {
  const out: Crossing[] = [];
  for (const { scope, budget, used } of lines) {
    const after = add(used);
    for (const unit of UNITS) {
      const limit = budget[unit];
      if (limit === undefined) continue;
      const a = measure(unit, after);
      if (a >= limit) out.push({ scope, unit, level: 'exceeded', used: a, limit });
      else if (!pastWarning(measure(unit, used), limit) && pastWarning(a, limit)) out.push({ scope, unit, level: 'warning', used: a, limit });
    }
  }
  return out;
}

/** The first budget whose limit the scope's use has reached, or null when every budget still has room. */
export function exhausted(lines: readonly BudgetLine[]): Crossing | null {
  for (const { scope, budget, used } of lines) {
    for (const unit of UNITS) {
      const limit = budget[unit];
      if (limit !== undefined && measure(unit, used) >= limit) return { scope, unit, level: 'exceeded', used: measure(unit, used), limit };
    }
  }
  return null;
}

const SCOPE_WORDS: Record<BudgetScope, string> = {
  session: 'its session budget',
  profile_day: "its profile's budget for today (UTC)",
  brain_day: "the main brain's budget for today (UTC, BRAINSTEM_MAIN_BRAIN_BUDGET_USD)",
  global_day: "Brainstem's budget for today (UTC, BRAINSTEM_BUDGET_USD_PER_DAY)",
};

export const amount = (unit: BudgetUnit, n: number): string => (unit === 'usd' ? `$${n.toFixed(n < 1 ? 4 : 2)}` : `${Math.round(n).toLocaleString('en-US')} tokens`);

/** A crossing in plain words: "its session budget of 10,000 tokens: 10,250 used (103%)". */
export function describeCrossing(c: Crossing): string {
  return `${SCOPE_WORDS[c.scope]} of ${amount(c.unit, c.limit)}: ${amount(c.unit, c.used)} used (${Math.floor((100 * c.used) / c.limit)}%)`;
}
