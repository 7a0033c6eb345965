/** Dollars per million tokens of each kind, for one model. */
export interface ModelPrice {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

/**
 * Prices by model name (config `prices`, BRAINSTEM_PRICES). A key names a model or the start of its name (`gpt-5` prices
 * `gpt-5-codex`): the longest key that starts the model's name wins; `default` prices a model no key names (and a
 * runtime that does not say its model).
 */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

export const DEFAULT_PRICE_KEY = 'default';
const PRICE_FIELDS = ['input', 'output', 'cache_read', 'cache_write'] as const;
/** The dearest price per million tokens taken: a larger one is a typo, not a model. */
const MAX_PRICE = 10_000;

/** The table from config (YAML or the JSON of BRAINSTEM_PRICES), or what is wrong with it. */
export function parsePriceTable(raw: unknown): { table: PriceTable } | { error: string } {
  if (raw === null || raw === undefined) return { table: {} };
  if (typeof raw !== 'object' || Array.isArray(raw)) return { error: 'expected a map of model name to {input, output, cache_read, cache_write} dollars per million tokens' };
  const table: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(raw)) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$/.test(model)) return { error: `${JSON.stringify(model)}: not a model name` };
    if (typeof price !== 'object' || price === null || Array.isArray(price)) return { error: `${model}: expected {input, output, cache_read, cache_write}` };
    const p = price as Record<string, unknown>;
    const unknown = Object.keys(p).find((k) => !(PRICE_FIELDS as readonly string[]).includes(k));
    if (unknown !== undefined) return { error: `${model}.${unknown}: unknown field (expected ${PRICE_FIELDS.join(', ')})` };
    const entry = {} as ModelPrice;
    for (const f of PRICE_FIELDS) {
      const v = p[f] ?? (f === 'cache_read' || f === 'cache_write' ? p.input : undefined);
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > MAX_PRICE) return { error: `${model}.${f}: expected dollars per million tokens, 0..${MAX_PRICE}, got ${JSON.stringify(v)}` };
      entry[f] = v;
    }
    table[model] = entry;
  }
  return { table };
}
