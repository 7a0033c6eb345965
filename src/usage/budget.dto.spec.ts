import { DomainError } from '../common/domain-error';
import { parseDto } from '../common/validation-errors';
import { BudgetDto } from './budget.dto';

describe('a budget as a request gives it', () => {
  const refusal = (value: object): string | null => {
    try {
      parseDto(BudgetDto, value);
      return null;
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      return `${e.code}: ${e.message}`;
    }
  };

  it('given dollars with up to six decimals, then they are taken', () => {
    expect(parseDto(BudgetDto, { tokens: 3, usd: 1.234567 })).toMatchObject({ tokens: 3, usd: 1.234567 });
    expect(parseDto(BudgetDto, { usd: 0.1 })).toMatchObject({ usd: 0.1 });
    expect(parseDto(BudgetDto, { usd: 2e-6 })).toMatchObject({ usd: 2e-6 });
  });

  it('given dollars with more decimals, written plainly or with an exponent, then the refusal names usd', () => {
    for (const usd of [1.2345678, 5e-324, 1e-7]) expect(refusal({ usd })).toBe('invalid_input: usd: must be a finite number (at most 6 decimals)');
  });
});
