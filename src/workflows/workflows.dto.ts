import { ArrayMaxSize, IsArray, IsBoolean, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { PageQueryDto } from '../http/page.dto';

export class StartRunDto {
  @IsString() @MinLength(1) @MaxLength(200)
  workflow_id!: string;

  @IsOptional() @IsString() @MaxLength(200)
  name?: string;

  @IsOptional() @IsBoolean()
  auto_supervise?: boolean;

  @IsOptional() @IsArray() @ArrayMaxSize(1000) @IsString({ each: true }) @MaxLength(100, { each: true })
  session_ids?: string[];
}

/** A page of the runs list. */
export class RunsQueryDto extends PageQueryDto {}
