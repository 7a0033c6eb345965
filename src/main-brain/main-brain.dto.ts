import { Text } from '../common/text-limit';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { ConfirmationStatus } from './confirmation.decider';
import { QueryInt } from '../common/query-int';

export class PostMessageDto {
  @Text() @MinLength(1)
  text!: string;

  /** The chat seq of a worker's question this answers: the text goes to that worker. */
  @IsOptional() @IsInt() @Min(1)
  answer_to?: number;
}

export class ListMessagesQueryDto {
  @IsOptional() @QueryInt() @IsInt() @Min(1) @Max(2000)
  limit?: number;
}

const CONFIRMATION_STATUSES: ConfirmationStatus[] = ['pending', 'confirmed', 'refused', 'expired'];

export class ListConfirmationsQueryDto {
  @IsOptional() @IsIn(CONFIRMATION_STATUSES)
  status?: ConfirmationStatus;
}

export class RefuseConfirmationDto {
  @IsOptional() @IsString() @MaxLength(4000)
  reason?: string;
}

export class ChatStreamQueryDto {
  @IsOptional() @QueryInt() @IsInt() @Min(0)
  after_seq?: number;
}
