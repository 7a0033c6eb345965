import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../http/page.dto';
import { QueryInt } from '../common/query-int';
import { MAX_TASK_HINT, MAX_TURNS_LIMIT } from './supervision.machine';

export class AutonomousDto {
  @IsBoolean()
  enabled!: boolean;

  // Absent is fine; null is not a task hint (IsOptional would let it through).
  @ValidateIf((o: AutonomousDto) => o.task_hint !== undefined) @IsString() @MaxLength(MAX_TASK_HINT)
  task_hint?: string;

  @IsOptional() @IsInt() @Min(1) @Max(MAX_TURNS_LIMIT)
  max_turns?: number;
}

export class ScopeDto {
  @IsIn(['all', 'only', 'except', 'invert'])
  mode!: 'all' | 'only' | 'except' | 'invert';

  @IsOptional() @IsArray() @ArrayMaxSize(10000) @IsString({ each: true }) @MaxLength(100, { each: true })
  session_ids?: string[];
}

export class CompleteRoundDto {
  @IsOptional() @IsString() @MaxLength(20000)
  summary?: string;
}

export class RoundStreamQueryDto {
  @IsOptional() @QueryInt() @IsInt() @Min(0)
  after_seq?: number;
}

/** A page of the rounds list. */
export class RoundsQueryDto extends PageQueryDto {}
