import { IsInt, IsNumber, IsOptional, Max, Min, ValidateBy, ValidationOptions } from 'class-validator';
import { Describe } from '../common/dto-schema';
import { Budget, MAX_BUDGET_TOKENS, MAX_BUDGET_USD } from './budget.rules';

/** More than zero: a budget of nothing would hold a worker before its first turn; leave the field out for no limit. */
function IsPositive(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isPositive', validator: { validate: (v: unknown) => typeof v === 'number' && v > 0, defaultMessage: () => '$property: must be more than 0' } }, options);
}

/**
 * At most six decimals, told from the value (rounded to millionths, it is unchanged): class-validator's
 * maxDecimalPlaces reads them from the number's text, and threw on one written with an exponent (`5e-324`).
 */
function AtMostSixDecimals(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'atMostSixDecimals', validator: { validate: (v: unknown) => typeof v === 'number' && Math.round(v * 1e6) / 1e6 === v } }, options);
}

/**
 * A budget as requests give it (POST /coding-sessions `budget`, PATCH …/budget, a profile's `budget`): each limit a
 * positive finite number within reason; a limit left out is none. Negative, NaN, infinite or absurd values are refused.
 */
export class BudgetDto implements Budget {
  @IsOptional()
  @IsInt({ message: 'tokens: must be an integer' })
  @Min(1, { message: 'tokens: must be at least 1' })
  @Max(MAX_BUDGET_TOKENS, { message: `tokens: must be at most ${MAX_BUDGET_TOKENS}` })
  @Describe('Tokens at most (input, output, cache reads and writes together).')
  tokens?: number;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'usd: must be a finite number (at most 6 decimals)' })
  @AtMostSixDecimals({ message: 'usd: must be a finite number (at most 6 decimals)' })
  @IsPositive()
  @Max(MAX_BUDGET_USD, { message: `usd: must be at most ${MAX_BUDGET_USD}` })
  @Describe('US dollars at most.')
  usd?: number;
}

/** A validated budget as plain data: the limits given, nulls (which the pipe lets through an optional field) read as absent. */
export function budgetOf(dto: BudgetDto | null | undefined): Budget | null {
  if (!dto) return null;
  const b: Budget = {};
  if (typeof dto.tokens === 'number') b.tokens = dto.tokens;
  if (typeof dto.usd === 'number') b.usd = dto.usd;
  return b.tokens === undefined && b.usd === undefined ? null : b;
}
