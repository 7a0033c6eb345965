/** How usage reads on the page: short token counts and dollars. Pure, so a spec can pin it. */

/** 950 → "950", 12_345 → "12.3k", 4_200_000 → "4.2M". */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 2 : 1).replace(/\.?0+$/, '')}k`;
  return `${(n / 1_000_000).toFixed(n < 10_000_000 ? 2 : 1).replace(/\.?0+$/, '')}M`;
}

/** Dollars: cents once there are some, four decimals below a cent; `~` when a price table estimated any of it. */
export function formatUsd(usd: number, estimated = false): string {
  const text = usd >= 0.01 || usd === 0 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
  return estimated ? `~${text}` : text;
}

/** A budget in words, or `none`. */
export function formatBudget(b: { tokens?: number; usd?: number } | null | undefined): string {
  const parts = [b?.tokens !== undefined ? `${formatTokens(b.tokens)} tokens` : null, b?.usd !== undefined ? formatUsd(b.usd) : null].filter((p) => p !== null);
  return parts.length > 0 ? parts.join(' · ') : 'none';
}

/**
 * A budget from the form's two fields: blank is no limit; anything else must be a positive number (whole for tokens),
 * or the form says what is wrong before anything is sent (the service refuses it too).
 */
export function budgetFromFields(tokens: string, usd: string): { budget: { tokens?: number; usd?: number } } | { error: string } {
  const budget: { tokens?: number; usd?: number } = {};
  if (tokens.trim() !== '') {
    const n = Number(tokens.trim());
    if (!Number.isInteger(n) || n < 1) return { error: 'Tokens must be a whole number of at least 1, or blank for none.' };
    budget.tokens = n;
  }
  if (usd.trim() !== '') {
    const n = Number(usd.trim());
    if (!Number.isFinite(n) || n <= 0) return { error: 'Dollars must be more than 0, or blank for none.' };
    budget.usd = n;
  }
  return { budget };
}

/** Bars for a chart: each value's share of the largest, so the largest fills the width. */
export function barWidths(values: readonly number[], width: number): number[] {
  const max = Math.max(0, ...values);
  return values.map((v) => (max > 0 ? Math.max(v > 0 ? 1 : 0, Math.round((v / max) * width)) : 0));
}
