import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { Describe } from '../common/dto-schema';
import { PageQueryDto } from '../http/page.dto';
import { QueryInt } from '../common/query-int';
import { MAX_TASK_HINT, MAX_TURNS_LIMIT } from './supervision.machine';

/** The goal and the rounds of a supervision, as the switch and the brain's enable_supervision take them. */
export class SupervisionGoalFields {
  // Absent is fine; null is not a task hint (IsOptional would let it through).
  @ValidateIf((o: SupervisionGoalFields) => o.task_hint !== undefined) @IsString() @MaxLength(MAX_TASK_HINT) @Describe('The supervision goal.')
  task_hint?: string;

  @IsOptional() @IsInt() @Min(1) @Max(MAX_TURNS_LIMIT)
  max_turns?: number;
}

export class AutonomousDto extends SupervisionGoalFields {
  @IsBoolean()
  enabled!: boolean;

  @IsOptional() @IsBoolean() @Describe('With enabled=true: the claude sessions started outside Brainstem join supervision, now and when they report later.')
  include_external?: boolean;
}

/** Sessions named by cs_ id or alias, for a scope. */
export const SessionIds = (): PropertyDecorator => (target, key) => {
  IsArray()(target, key);
  ArrayMaxSize(10000)(target, key);
  IsString({ each: true })(target, key);
  IsNotEmpty({ each: true })(target, key);
  MaxLength(100, { each: true })(target, key);
};

export class ScopeDto {
  @IsIn(['all', 'only', 'except', 'invert'])
  mode!: 'all' | 'only' | 'except' | 'invert';

  @IsOptional() @SessionIds()
  session_ids?: string[];

  @IsOptional() @IsBoolean() @Describe('true: every external session joins with the scope, now and when it reports later; false: those reporting later do not.')
  include_external?: boolean;
}

/** What a round (or a whole supervision) did, in the brain's words. */
export const Summary = (): PropertyDecorator => (target, key) => {
  IsString()(target, key);
  MaxLength(20000)(target, key);
};

export class CompleteRoundDto {
  @IsOptional() @Summary()
  summary?: string;
}

export class RoundStreamQueryDto {
  @IsOptional() @QueryInt() @IsInt() @Min(0)
  after_seq?: number;
}

/** A page of the rounds list. */
export class RoundsQueryDto extends PageQueryDto {}
