import { DEFAULT_PRICE_KEY, ModelPrice, PriceTable } from '../config/price-table';
import { ModelUsage, PricedUsage, roundUsd } from './usage.model';

/**
 * The price of a model by the table, or null when neither a key nor `default` prices it. A provider before the name
 * (opencode's `anthropic/claude-sonnet-4-5`) is looked past.
 */
export function priceOf(table: PriceTable, model: string | null): ModelPrice | null {
  let best: string | null = null;
  const names = model === null ? [] : [model, model.slice(model.lastIndexOf('/') + 1)];
  for (const name of names) {
    for (const key of Object.keys(table)) {
      if (key !== DEFAULT_PRICE_KEY && name.startsWith(key) && (best === null || key.length > best.length)) best = key;
    }
  }
  return table[best ?? DEFAULT_PRICE_KEY] ?? null;
}

/** A turn's usage with its cost: the runtime's when it reported one, else the table's estimate (0 when nothing prices it). */
export function priced(u: ModelUsage, table: PriceTable): PricedUsage {
  const { cost_usd, ...rest } = u;
  if (cost_usd !== null) return { ...rest, cost_usd: roundUsd(cost_usd), cost_estimated: false };
  const price = priceOf(table, u.model);
  const cost = price
    ? (u.input_tokens * price.input + u.output_tokens * price.output + u.cache_read_tokens * price.cache_read + u.cache_write_tokens * price.cache_write) / 1e6
    : 0;
  return { ...rest, cost_usd: roundUsd(cost), cost_estimated: true };
}
