import { barWidths, budgetFromFields, formatBudget, formatTokens, formatUsd } from './usage-format';

describe('usage on the page', () => {
  it('Given token counts, When shown, Then they are short', () => {
    expect([950, 1000, 1234, 12_345, 4_200_000, 12_000_000].map(formatTokens)).toEqual(['950', '1k', '1.23k', '12.3k', '4.2M', '12M']);
  });

  it('Given dollars, When shown, Then cents, four decimals under a cent, and ~ when estimated', () => {
    expect([formatUsd(0), formatUsd(1.5), formatUsd(0.0012), formatUsd(0.02, true)]).toEqual(['$0.00', '$1.50', '$0.0012', '~$0.02']);
    expect(formatBudget({ tokens: 10_000, usd: 2 })).toBe('10k tokens · $2.00');
    expect(formatBudget(null)).toBe('none');
  });

  it('Given the form fields, When read as a budget, Then blanks are no limit and bad numbers are named', () => {
    expect(budgetFromFields('10000', '')).toEqual({ budget: { tokens: 10000 } });
    expect(budgetFromFields('', '')).toEqual({ budget: {} });
    expect(budgetFromFields('1.5', '')).toEqual({ error: expect.stringContaining('Tokens') });
    expect(budgetFromFields('', '-1')).toEqual({ error: expect.stringContaining('Dollars') });
    expect(budgetFromFields('', 'NaN')).toEqual({ error: expect.stringContaining('Dollars') });
  });

  it('Given values, When drawn as bars, Then the largest fills the width and a small one stays visible', () => {
    expect(barWidths([10, 5, 0.01, 0], 200)).toEqual([200, 100, 1, 0]);
    expect(barWidths([], 200)).toEqual([]);
  });
});
