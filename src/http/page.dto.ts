import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { MAX_PAGE_LIMIT } from '../common/page';
import { QueryInt } from '../common/query-int';

/** `limit` and `cursor` of a paged list (`next_cursor` of the page before). */
export class PageQueryDto {
  @IsOptional() @QueryInt() @IsInt() @Min(1) @Max(MAX_PAGE_LIMIT)
  limit?: number;

  @IsOptional() @IsString() @MaxLength(100) @Matches(/^[A-Za-z0-9_-]+$/, { message: 'cursor: must be a next_cursor as a list returned it' })
  cursor?: string;
}
