import { Type } from 'class-transformer';
import { IsOptional, ValidateNested } from 'class-validator';
import { BudgetDto } from '../usage/budget.dto';
import { Budget } from '../usage/budget.rules';

/**
 * What a profile's sessions may spend (docs/guide/usage.md#budgets): each session (unless its start gives it a budget
 * of its own), and all of them together in a UTC day. A limit left out is none.
 */
export class ProfileBudgetConfig {
  @IsOptional() @ValidateNested() @Type(() => BudgetDto)
  per_session?: BudgetDto;

  @IsOptional() @ValidateNested() @Type(() => BudgetDto)
  per_day?: BudgetDto;
}

export interface ProfileBudget {
  per_session?: Budget;
  per_day?: Budget;
}

/** The budget as the normalized document keeps it: only limits that are set, and none at all when nothing is. */
export function normalizeBudget(b: ProfileBudget | undefined): { budget: ProfileBudget } | Record<string, never> {
  const keep = (x: Budget | undefined): Budget | undefined => {
    if (!x) return undefined;
    const out: Budget = {};
    if (typeof x.tokens === 'number') out.tokens = x.tokens;
    if (typeof x.usd === 'number') out.usd = x.usd;
    return out.tokens === undefined && out.usd === undefined ? undefined : out;
  };
  const per_session = keep(b?.per_session);
  const per_day = keep(b?.per_day);
  if (!per_session && !per_day) return {};
  return { budget: { ...(per_session ? { per_session } : {}), ...(per_day ? { per_day } : {}) } };
}

/**
 * What a change to a profile's budget loosens (a limit raised or removed): what its sessions may spend is the user's to
 * widen, never the main brain's. Lowering or adding a limit widens nothing.
 */
export function budgetLoosened(before: ProfileBudget | undefined, after: ProfileBudget | undefined): string[] {
  const out: string[] = [];
  for (const per of ['per_session', 'per_day'] as const) {
    for (const unit of ['tokens', 'usd'] as const) {
      const was = before?.[per]?.[unit];
      const now = after?.[per]?.[unit];
      if (was !== undefined && (now === undefined || now > was)) out.push(`profile.budget.${per}.${unit}: ${now === undefined ? 'remove' : 'raise'} the limit of ${was}`);
    }
  }
  return out;
}
