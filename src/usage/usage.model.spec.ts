import { priced, priceOf } from './price-table';
import { parsePriceTable } from '../config/price-table';
import { crossings, describeCrossing, exhausted } from './budget.rules';
import { ModelUsage, addTurn, emptyTotals, tokensOf, turnOfRunningTotal, usageProblem } from './usage.model';

const usage = (over: Partial<ModelUsage> = {}): ModelUsage => ({ model: 'claude-sonnet-4-5', input_tokens: 100, output_tokens: 20, cache_read_tokens: 30, cache_write_tokens: 10, cost_usd: null, ...over });
const TABLE = { 'claude-sonnet-4': { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }, claude: { input: 1, output: 1, cache_read: 1, cache_write: 1 }, default: { input: 10, output: 10, cache_read: 10, cache_write: 10 } };

describe('usage: counting, pricing, budgets', () => {
  it('Given a runtime that reported its cost, When priced, Then its cost is kept and not marked estimated', () => {
    expect(priced(usage({ cost_usd: 0.0123 }), TABLE)).toMatchObject({ cost_usd: 0.0123, cost_estimated: false });
  });

  it('Given no cost, When priced, Then the longest key that starts the model name prices each kind per million tokens', () => {
    // 100×3 + 20×15 + 30×0.3 + 10×3.75 = 646.5 per million
    expect(priced(usage(), TABLE)).toMatchObject({ cost_usd: 0.0006465, cost_estimated: true });
    expect(priceOf(TABLE, 'gpt-5')).toEqual(TABLE.default);
    expect(priceOf(TABLE, null)).toEqual(TABLE.default);
    expect(priceOf(TABLE, 'anthropic/claude-sonnet-4-5')).toEqual(TABLE['claude-sonnet-4']);
    expect(priced(usage({ model: 'x' }), {})).toMatchObject({ cost_usd: 0, cost_estimated: true });
  });

  it.each([
    [{ input_tokens: -1 }, 'input_tokens'],
    [{ output_tokens: 1.5 }, 'output_tokens'],
    [{ cache_read_tokens: Number.NaN }, 'cache_read_tokens'],
    [{ cache_write_tokens: 'ten' as unknown as number }, 'cache_write_tokens'],
    [{ input_tokens: 2e9 }, 'input_tokens'],
    [{ cost_usd: Number.POSITIVE_INFINITY }, 'cost_usd'],
    [{ cost_usd: -0.1 }, 'cost_usd'],
    [{ model: 'a model; rm -rf' }, 'model'],
  ])('Given garbage %j, When checked, Then the problem names %s', (over, field) => {
    expect(usageProblem(usage(over))).toMatch(new RegExp(`^${field}:`));
  });

  it('Given sane usage, When checked, Then there is no problem', () => {
    expect(usageProblem(usage({ cost_usd: 0 }))).toBeNull();
  });

  it('Given a turn of two models, When added, Then it counts one turn and sums every kind and the cost', () => {
    const t = addTurn(emptyTotals(), [priced(usage({ cost_usd: 0.5 }), {}), priced(usage({ model: 'claude-haiku', cost_usd: 0.25 }), {})]);
    expect(t).toEqual({ turns: 1, input_tokens: 200, output_tokens: 40, cache_read_tokens: 60, cache_write_tokens: 20, cost_usd: 0.75, cost_estimated: false });
    expect(tokensOf(t)).toBe(320);
  });

  it('Given a budget of 1,000 tokens at 700 used, When a turn of 160 tokens lands, Then it warns at 80% once, and the turn that reaches 1,000 exceeds it', () => {
    const at = (tokens: number) => addTurn(emptyTotals(), [priced(usage({ input_tokens: tokens, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0 }), {})]);
    const line = (used: number) => [{ scope: 'session' as const, budget: { tokens: 1000 }, used: at(used) }];
    const turn = (n: number) => (t: ReturnType<typeof emptyTotals>) => addTurn(t, [priced(usage({ input_tokens: n, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0 }), {})]);
    expect(crossings(line(700), turn(160))).toEqual([{ scope: 'session', unit: 'tokens', level: 'warning', used: 860, limit: 1000 }]);
    expect(crossings(line(860), turn(100))).toEqual([]);
    expect(crossings(line(960), turn(40))).toEqual([{ scope: 'session', unit: 'tokens', level: 'exceeded', used: 1000, limit: 1000 }]);
    expect(exhausted(line(999))).toBeNull();
    expect(exhausted(line(1000))).toMatchObject({ level: 'exceeded' });
    expect(describeCrossing({ scope: 'session', unit: 'tokens', level: 'exceeded', used: 1250, limit: 1000 })).toBe('its session budget of 1,000 tokens: 1,250 tokens used (125%)');
  });

  it("Given codex's running total of a thread, When the turn's part is taken, Then it is what is new; a smaller total is a new thread's own", () => {
    const before = { ...emptyTotals(), input_tokens: 61, cache_read_tokens: 40, output_tokens: 21 };
    expect(turnOfRunningTotal(usage({ input_tokens: 123, cache_read_tokens: 80, output_tokens: 43, cache_write_tokens: 0 }), before)).toMatchObject({ input_tokens: 62, cache_read_tokens: 40, output_tokens: 22 });
    expect(turnOfRunningTotal(usage({ input_tokens: 10, cache_read_tokens: 0, output_tokens: 2, cache_write_tokens: 0 }), before)).toMatchObject({ input_tokens: 10, output_tokens: 2 });
  });

  it('Given a price table from config, When parsed, Then cache prices default to the input price and bad entries are named', () => {
    expect(parsePriceTable({ m: { input: 2, output: 4 } })).toEqual({ table: { m: { input: 2, output: 4, cache_read: 2, cache_write: 2 } } });
    expect(parsePriceTable({ m: { input: -1, output: 4 } })).toEqual({ error: expect.stringContaining('m.input') });
    expect(parsePriceTable({ m: { input: 1, output: 1, extra: 1 } })).toEqual({ error: expect.stringContaining('m.extra: unknown field') });
    expect(parsePriceTable([1])).toEqual({ error: expect.stringContaining('expected a map') });
  });
});
