import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsObject, IsOptional, IsString, Matches, ValidateBy, ValidateIf, ValidateNested } from 'class-validator';
import { PathField } from '../common/path-field';
import { EMIT_RUNTIMES } from './emitters';
import { IsProfileName, PROFILE_ID_PATTERN, PROFILE_SCOPES, ProfileFields, ProfileScope, RUNTIMES, Runtime } from './profile.schema';

/** REST shapes. Bodies reuse the document schema; the API calls the runtime `target_runtime`. */

/** A profile's id. */
export const ProfileId = (): PropertyDecorator => Matches(PROFILE_ID_PATTERN, { message: '$property must be a profile id ([a-z0-9][a-z0-9-]{0,63})' });

export class ProfileIdParam {
  @ProfileId()
  id!: string;
}

export class CreateProfileDto extends ProfileFields {
  @IsProfileName()
  name!: string;

  @IsOptional() @IsIn(RUNTIMES)
  target_runtime?: Runtime;

  /** Service metadata, not part of the document: only a personal profile may use bypassPermissions. */
  @IsOptional() @IsIn(PROFILE_SCOPES)
  scope?: ProfileScope;
}

/**
 * `tools` in a PATCH: an MCP server set to null is removed, so the servers are checked here only as a mapping of
 * objects or nulls; the merged profile is then validated as a whole, each server included.
 */
export class ToolsPatch {
  @IsOptional() @IsArray() @IsString({ each: true }) @ArrayMaxSize(500)
  builtin?: string[];

  @IsOptional()
  @ValidateBy({
    name: 'isServerPatch',
    validator: {
      validate: (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((s) => s === null || (typeof s === 'object' && !Array.isArray(s))),
      defaultMessage: () => '$property must be an object whose values are MCP servers or null (to remove one)',
    },
  })
  mcp_servers?: Record<string, unknown>;

  @IsOptional() @IsArray() @IsString({ each: true }) @ArrayMaxSize(500)
  deny?: string[];
}

/** Partial, a JSON merge patch: objects deep-merge into the stored profile, arrays replace, null removes; the result is validated as a whole. */
/** The document's fields with `tools` as a patch (its type differs: a server may be null). */
const PatchFields = ProfileFields as abstract new () => Omit<ProfileFields, 'tools'>;

export class UpdateProfileDto extends PatchFields {
  @IsOptional() @ValidateNested() @Type(() => ToolsPatch)
  tools?: ToolsPatch;

  @IsOptional() @IsProfileName()
  name?: string;

  @IsOptional() @IsIn(RUNTIMES)
  target_runtime?: Runtime;

  /** Service metadata, not part of the document: only a personal profile may use bypassPermissions. */
  @IsOptional() @IsIn(PROFILE_SCOPES)
  scope?: ProfileScope;
}

export class DuplicateProfileDto {
  /** null, like no name, takes the source's name with " (copy)". */
  @IsOptional() @IsProfileName()
  name?: string | null;
}

/** JSON form of an import; a YAML body (application/yaml) arrives in the same shape. */
export class ImportProfileDto {
  @IsString()
  yaml!: string;
}

/** `?scope=` lints as if the profile had that scope; without it, in its own. */
export class LintQueryDto {
  @IsOptional() @IsIn(PROFILE_SCOPES)
  scope?: ProfileScope;
}

/**
 * `POST /lint`: a draft in API names, checked by the linter rather than by this DTO, so a draft that breaks the
 * schema is answered with findings instead of a 400.
 */
export class LintDraftDto {
  @IsObject()
  document!: Record<string, unknown>;

  @IsOptional() @IsIn(PROFILE_SCOPES)
  scope?: ProfileScope;
}

export class ProjectBindingDto {
  @PathField()
  project_dir!: string;

  /** null unbinds the directory. */
  @ValidateIf((o: ProjectBindingDto) => o.profile_id !== null)
  @ProfileId()
  profile_id!: string | null;
}

export const APPLY_RUNTIMES = ['auto', ...EMIT_RUNTIMES] as const;
export type ApplyRuntime = (typeof APPLY_RUNTIMES)[number];

/** `GET /{id}/preview?runtime=&dir=` */
export class PreviewQueryDto {
  @IsOptional() @IsIn(APPLY_RUNTIMES)
  runtime?: ApplyRuntime;

  @IsOptional() @PathField()
  dir?: string;
}

/** `POST /{id}/apply {dir?, runtime?, force?}` */
export class ApplyProfileDto extends PreviewQueryDto {
  @IsOptional() @IsBoolean()
  force?: boolean;
}
