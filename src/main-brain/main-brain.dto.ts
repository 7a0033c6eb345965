import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { ConfirmationStatus } from './confirmation.decider';
import { QueryInt } from '../http/query-int';

export class PostMessageDto {
  @IsString() @MinLength(1) @MaxLength(65536)
  text!: string;
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
