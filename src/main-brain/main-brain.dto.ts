import { IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { QueryInt } from '../http/query-int';

export class PostMessageDto {
  @IsString() @MinLength(1) @MaxLength(65536)
  text!: string;
}

export class ListMessagesQueryDto {
  @IsOptional() @QueryInt() @IsInt() @Min(1) @Max(2000)
  limit?: number;
}
