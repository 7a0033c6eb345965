import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { QueryInt } from '../common/query-int';

/** Query of the SSE stream: where to resume and what to keep. */
export class StreamQueryDto {
  @IsOptional() @QueryInt() @IsInt() @Min(0)
  after_seq?: number;

  @IsOptional() @IsString() @MaxLength(200)
  stream?: string;

  @IsOptional() @IsString() @MaxLength(100)
  type?: string;
}

/** Query of a journal page: the stream query plus a page size. */
export class EventsQueryDto extends StreamQueryDto {
  @IsOptional() @QueryInt() @IsInt() @Min(1) @Max(1000)
  limit?: number;
}
