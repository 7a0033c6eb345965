/**
 * What a model call costs, as Brainstem counts it: tokens in four kinds and dollars. Pure: no Nest, no journal.
 *
 * The kinds never overlap: `input_tokens` are the prompt tokens not read from a cache (OpenAI and Gemini count cached
 * ones inside their input, so their parsers take them out), `cache_read_tokens` those read from it, `cache_write_tokens`
 * those written to it, `output_tokens` what the model wrote (reasoning included). A budget's `tokens` is their sum.
 */

export interface TokenCounts {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

/** One model's usage in one turn, as a runtime reports it: the cost when the runtime says it (claude, opencode), else null. */
export interface ModelUsage extends TokenCounts {
  model: string | null;
  cost_usd: number | null;
}

/** The same with a cost always: the runtime's, or the price table's (`cost_estimated`). What the journal keeps of a turn. */
export interface PricedUsage extends TokenCounts {
  model: string | null;
  cost_usd: number;
  cost_estimated: boolean;
}

/** Sums: a session's, a profile's, a day's, the brain's. `turns`: how many turn reports they add up. */
export interface UsageTotals extends TokenCounts {
  turns: number;
  cost_usd: number;
  /** Whether any of the cost is the price table's estimate rather than what a runtime reported. */
  cost_estimated: boolean;
}

export const TOKEN_KINDS = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens'] as const;

export const emptyTotals = (): UsageTotals => ({ turns: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, cost_estimated: false });

export const tokensOf = (u: TokenCounts): number => u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens;

/** Dollars kept to a millionth of a cent: sums of many small floats would otherwise drift in the last digits. */
export const roundUsd = (usd: number): number => Math.round(usd * 1e8) / 1e8;

/** One model's usage of a turn added to totals (a new object): `newTurn` when it is the first entry of its turn. */
export function addUsage(totals: UsageTotals, e: PricedUsage, newTurn: boolean): UsageTotals {
  return {
    turns: totals.turns + (newTurn ? 1 : 0),
    input_tokens: totals.input_tokens + e.input_tokens,
    output_tokens: totals.output_tokens + e.output_tokens,
    cache_read_tokens: totals.cache_read_tokens + e.cache_read_tokens,
    cache_write_tokens: totals.cache_write_tokens + e.cache_write_tokens,
    cost_usd: roundUsd(totals.cost_usd + e.cost_usd),
    cost_estimated: totals.cost_estimated || e.cost_estimated,
  };
}

/** A whole turn (one entry per model) added to totals. */
export const addTurn = (totals: UsageTotals, entries: readonly PricedUsage[]): UsageTotals => entries.reduce((t, e, i) => addUsage(t, e, i === 0), totals);

/** Totals added to totals (a projection's sum over sessions, over days). */
export function addTotals(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    turns: a.turns + b.turns,
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_read_tokens: a.cache_read_tokens + b.cache_read_tokens,
    cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
    cost_usd: roundUsd(a.cost_usd + b.cost_usd),
    cost_estimated: a.cost_estimated || b.cost_estimated,
  };
}

/** The most one turn may report of a kind of token, or of dollars: more is a runtime's garbage, not a turn. */
export const MAX_TURN_TOKENS = 1e9;
export const MAX_TURN_USD = 1e5;
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@/\[\]-]{0,199}$/;

/**
 * Why a runtime's usage report cannot be counted (negative, fractional, not finite, absurd, a model name that is not
 * one), or null when it can. Such a report is logged and dropped whole: half a turn counted would corrupt the totals.
 */
export function usageProblem(u: ModelUsage): string | null {
  for (const k of TOKEN_KINDS) {
    const n = u[k];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_TURN_TOKENS) return `${k}: expected an integer 0..${MAX_TURN_TOKENS}, got ${String(n)}`;
  }
  if (u.cost_usd !== null && (typeof u.cost_usd !== 'number' || !Number.isFinite(u.cost_usd) || u.cost_usd < 0 || u.cost_usd > MAX_TURN_USD)) {
    return `cost_usd: expected a number 0..${MAX_TURN_USD}, got ${String(u.cost_usd)}`;
  }
  if (u.model !== null && (typeof u.model !== 'string' || !MODEL_NAME.test(u.model))) return `model: not a model name: ${JSON.stringify(u.model).slice(0, 80)}`;
  return null;
}

/**
 * A turn's usage from a runtime that reports the thread's running total (codex): the total less what the thread had
 * used before. A total below that is a new thread (its count started again): then it is the turn's own.
 */
export function turnOfRunningTotal(total: ModelUsage, before: TokenCounts & { cost_usd: number }): ModelUsage {
  if (TOKEN_KINDS.some((k) => typeof total[k] !== 'number' || total[k] < before[k])) return total;
  const turn = { ...total };
  for (const k of TOKEN_KINDS) turn[k] = total[k] - before[k];
  if (total.cost_usd !== null) turn.cost_usd = Math.max(0, total.cost_usd - before.cost_usd);
  return turn;
}

/** A day as usage is bucketed by: the UTC date, `YYYY-MM-DD`. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
