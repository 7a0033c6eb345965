import { IsIn, IsOptional, Matches, ValidateBy, ValidationArguments } from 'class-validator';
import { Describe } from '../common/dto-schema';
import { USAGE_GROUPS, UsageGroup } from './usage.projection';

const DAY = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const isDay = (v: unknown): boolean => typeof v === 'string' && DAY.test(v) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v);

const notBeforeSince = (v: unknown, a?: ValidationArguments): boolean => {
  const since = (a?.object as { since?: unknown } | undefined)?.since;
  return typeof v !== 'string' || typeof since !== 'string' || v >= since;
};

/** GET /api/v1/usage: how to group the totals, and which UTC days to count (each end included). */
export class UsageQueryDto {
  @IsIn(USAGE_GROUPS, { message: `group_by: must be one of ${USAGE_GROUPS.join(', ')}` })
  @Describe('How the totals are grouped: by session, profile, UTC day, brain conversation, or workflow run.')
  group_by!: UsageGroup;

  @IsOptional()
  @Matches(DAY, { message: 'since: must be a UTC day, YYYY-MM-DD' })
  @ValidateBy({ name: 'isDay', validator: { validate: isDay, defaultMessage: () => 'since: not a calendar day' } })
  @Describe('The first UTC day counted (YYYY-MM-DD); absent: from the start.')
  since?: string;

  @IsOptional()
  @Matches(DAY, { message: 'until: must be a UTC day, YYYY-MM-DD' })
  @ValidateBy({ name: 'isDay', validator: { validate: isDay, defaultMessage: () => 'until: not a calendar day' } })
  @ValidateBy({ name: 'notBeforeSince', validator: { validate: notBeforeSince, defaultMessage: () => 'until: must not be before since' } })
  @Describe('The last UTC day counted (YYYY-MM-DD); absent: up to today.')
  until?: string;
}
