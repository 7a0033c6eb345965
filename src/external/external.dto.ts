import { IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, MaxLength, Min, ValidateIf } from 'class-validator';
import { Describe } from '../common/dto-schema';
import { HookScope } from './claude-hooks.installer';

/** What `brainstem hook <event>` posts: claude's hook input as it came on stdin, and claude's pid when the hook knows it. */
export class HookReportDto {
  @IsObject() @Describe("claude's hook input, as claude gives it on stdin; fields Brainstem does not read are dropped")
  event!: Record<string, unknown>;

  @IsOptional() @IsInt() @Min(2) @Describe("claude's process id (CLAUDE_PID in the hook's environment), checked against /proc")
  claude_pid?: number | null;
}

/** Where to install Brainstem's hooks, or take them out; dry_run: only the preview. */
export class HooksDto {
  @IsIn(['user', 'project']) @Describe('user: ~/.claude/settings.json; project: <project_dir>/.claude/settings.local.json')
  scope!: HookScope;

  // Absent is fine; null is not a folder.
  @ValidateIf((o: HooksDto) => o.project_dir !== undefined) @IsString() @MaxLength(4096) @Describe('The project folder (absolute), for scope project.')
  project_dir?: string;

  @IsOptional() @IsBoolean() @Describe('Only the preview (a diff of the settings file): nothing is written.')
  dry_run?: boolean;
}
