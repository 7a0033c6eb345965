import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export class EventsQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  after_seq?: number;

  @IsOptional() @IsString() @MaxLength(200)
  stream?: string;

  @IsOptional() @IsString() @MaxLength(100)
  type?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;
}

export class StreamQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(0)
  after_seq?: number;

  @IsOptional() @IsString() @MaxLength(200)
  stream?: string;

  @IsOptional() @IsString() @MaxLength(100)
  type?: string;
}
