import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';

export class PostMessageDto {
  @IsString() @MinLength(1) @MaxLength(65536)
  text!: string;
}

export class ListMessagesQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(2000)
  limit?: number;
}
