import 'reflect-metadata';
import { Type, plainToInstance } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateNested,
  ValidationOptions,
  validateSync,
} from 'class-validator';
import { DtoPlain, dtoPlain, toPlain } from '../common/dto-plain';
import { inheritedKeyProblem } from '../common/inherited-key';
import { describeValidationErrors } from '../common/validation-errors';
import { ProfileBudget, ProfileBudgetConfig, normalizeBudget } from './profile-budget.schema';
import { LoopsConfig } from './profile-loops.schema';
import { SandboxConfig } from './profile-sandbox.schema';
import { WorktreeConfig } from './profile-worktree.schema';

export { LoopsConfig } from './profile-loops.schema';
export { SandboxConfig } from './profile-sandbox.schema';
export { WorktreeConfig } from './profile-worktree.schema';

/**
 * The one Agent Profile schema (docs/architecture/decisions.md#agent-profile-document). The same classes validate YAML
 * files, REST bodies and imports; `normalizeDocument` applies the defaults of docs/architecture/decisions.md#agent-profile-document on read. Pure: no Nest, no fs.
 */

export const RUNTIMES = ['auto', 'claude-code', 'codex', 'gemini-cli', 'opencode'] as const;
export type Runtime = (typeof RUNTIMES)[number];
export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'auto', 'dontAsk', 'bypassPermissions'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];
export const HOOK_EVENTS = ['SessionStart', 'PreToolUse', 'PostToolUse'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];
export const HOOK_TYPES = ['command', 'http', 'prompt'] as const;
export type HookType = (typeof HOOK_TYPES)[number];
export const SKILL_SOURCES = ['local', 'registry', 'git'] as const;
export type SkillSource = (typeof SKILL_SOURCES)[number];
export const MCP_TYPES = ['stdio', 'http'] as const;
export type McpType = (typeof MCP_TYPES)[number];
/** Where a session's worker works: in the folder it is given (`none`), or in a git worktree of its own. */
export const ISOLATIONS = ['none', 'worktree'] as const;
export type Isolation = (typeof ISOLATIONS)[number];
export const PROFILE_SOURCES = ['builtin', 'user', 'import'] as const;
export type ProfileSource = (typeof PROFILE_SOURCES)[number];
/** Shared profiles (the default) may not bypass permissions; personal ones are the user's own to loosen. */
export const PROFILE_SCOPES = ['shared', 'personal'] as const;
export type ProfileScope = (typeof PROFILE_SCOPES)[number];
/** Written by the service only; a file that sets them is read without them (lint warns). */
export const METADATA_FIELDS = ['created_at', 'updated_at', 'source', 'locked', 'owner_pack_id', 'scope'] as const;
export type MetadataField = (typeof METADATA_FIELDS)[number];

/** Ids are slugs, so no id can name a path outside the profiles directory. */
export const PROFILE_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;
export const MAX_PROFILE_YAML_BYTES = 256 * 1024;
const NO_NUL = /^[^\0]*$/;
const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;
/** A skill's name becomes a directory name under `.claude/skills/`: one plain path segment, never `..` or a path. */
const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Empty (none) or absolute: a relative target would depend on the service's working directory. */
const ABSOLUTE_OR_EMPTY = /^(\/|$)/;
const LIST_MAX = 500;
const TEXT_MAX = 128 * 1024;

function IsStringRecord(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStringRecord',
      validator: {
        validate: (v: unknown) =>
          typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string'),
        defaultMessage: () => '$property must be an object whose values are strings',
      },
    },
    options,
  );
}

/** A profile's display name: required text, not blank. */
export function IsProfileName(): PropertyDecorator {
  const rules = [
    IsString(),
    IsNotEmpty(),
    MaxLength(200),
    Matches(/\S/, { message: '$property must not be blank' }),
    Matches(NO_CONTROL, { message: '$property must not contain control characters' }),
  ];
  return (target, key) => rules.forEach((rule) => rule(target, key));
}

/** A nullable optional field: absent and null are both accepted. */
const Nullable = () => IsOptional();

export class ModelConfig {
  @IsOptional() @IsString() @MaxLength(200)
  model?: string;

  @Nullable() @IsString() @MaxLength(200)
  provider?: string | null;

  @IsOptional() @IsArray() @IsString({ each: true }) @ArrayMaxSize(20)
  fallback?: string[];

  @IsOptional() @IsObject()
  options?: Record<string, unknown>;
}

export class PathRule {
  @IsString() @IsNotEmpty() @MaxLength(1000)
  glob!: string;

  @IsString() @IsNotEmpty() @MaxLength(TEXT_MAX)
  instruction!: string;
}

export class InstructionsConfig {
  @IsOptional() @IsString() @MaxLength(TEXT_MAX)
  system_prompt?: string;

  @IsOptional() @IsArray() @IsString({ each: true }) @ArrayMaxSize(LIST_MAX)
  files?: string[];

  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => PathRule) @ArrayMaxSize(LIST_MAX)
  rules?: PathRule[];
}

export class McpServerConfig {
  @IsIn(MCP_TYPES)
  type!: McpType;

  @Nullable() @IsString() @MaxLength(4096)
  command?: string | null;

  @IsOptional() @IsArray() @IsString({ each: true }) @ArrayMaxSize(LIST_MAX)
  args?: string[];

  @Nullable() @IsString() @MaxLength(4096)
  url?: string | null;

  @IsOptional() @IsStringRecord()
  env?: Record<string, string>;
}

export class ToolsConfig {
  @IsOptional() @IsArray() @IsString({ each: true }) @ArrayMaxSize(LIST_MAX)
  builtin?: string[];

  // A Map so that class-validator validates each server and names it in error paths.
  @IsOptional() @IsObject() @ValidateNested({ each: true }) @Type(() => McpServerConfig)
  mcp_servers?: Map<string, McpServerConfig>;

  @IsOptional() @IsArray() @IsString({ each: true }) @ArrayMaxSize(LIST_MAX)
  deny?: string[];
}

export class PermissionsConfig {
  @IsOptional() @IsIn(PERMISSION_MODES)
  mode?: PermissionMode;

  @IsOptional() @IsArray() @IsString({ each: true }) @ArrayMaxSize(LIST_MAX)
  allow?: string[];

  @IsOptional() @IsArray() @IsString({ each: true }) @ArrayMaxSize(LIST_MAX)
  deny?: string[];

  @IsOptional() @IsArray() @IsString({ each: true }) @ArrayMaxSize(LIST_MAX)
  ask?: string[];
}

export class SkillRef {
  @IsString() @IsNotEmpty() @MaxLength(200)
  @Matches(SKILL_NAME, { message: '$property must be a plain name (letters, digits, ".", "_", "-"), not a path' })
  name!: string;

  @IsOptional() @IsIn(SKILL_SOURCES)
  source?: SkillSource;

  @Nullable() @IsString() @MaxLength(4096) @Matches(NO_NUL, { message: '$property must not contain NUL' })
  path?: string | null;

  @Nullable() @IsString() @MaxLength(200)
  version?: string | null;
}

export class HookHandler {
  @IsIn(HOOK_TYPES)
  type!: HookType;

  @Nullable() @IsString() @MaxLength(TEXT_MAX)
  command?: string | null;

  @Nullable() @IsString() @MaxLength(4096)
  url?: string | null;

  @Nullable() @IsString() @MaxLength(TEXT_MAX)
  prompt?: string | null;

  @Nullable() @IsString() @MaxLength(1000)
  matcher?: string | null;

  @IsOptional() @IsInt() @Min(1) @Max(86_400)
  timeout?: number;
}

/** Only the three supported hook events: any other key is an unknown field (400). */
export class HooksConfig {
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => HookHandler) @ArrayMaxSize(100)
  SessionStart?: HookHandler[];

  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => HookHandler) @ArrayMaxSize(100)
  PreToolUse?: HookHandler[];

  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => HookHandler) @ArrayMaxSize(100)
  PostToolUse?: HookHandler[];
}

/** A profile's `on_limit` section: the profile a parked worker goes on under (the linter checks it exists). */
export class OnLimitConfig {
  @IsString() @Matches(PROFILE_ID_PATTERN, { message: '$property must be a profile id ([a-z0-9][a-z0-9-]{0,63})' })
  fallback_profile!: string;
}

/** Fields shared by the YAML document and the REST bodies (which name the runtime `target_runtime`). */
export abstract class ProfileFields {
  @IsOptional() @IsInt() @IsIn([1, 2])
  version?: number;

  @IsOptional() @IsString() @MaxLength(2000)
  description?: string;

  @IsOptional() @IsString() @MaxLength(64)
  icon?: string;

  @IsOptional() @ValidateNested() @Type(() => ModelConfig)
  model?: ModelConfig;

  @IsOptional() @ValidateNested() @Type(() => InstructionsConfig)
  instructions?: InstructionsConfig;

  @IsOptional() @ValidateNested() @Type(() => ToolsConfig)
  tools?: ToolsConfig;

  @IsOptional() @ValidateNested() @Type(() => PermissionsConfig)
  permissions?: PermissionsConfig;

  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => SkillRef) @ArrayMaxSize(LIST_MAX)
  skills?: SkillRef[];

  @IsOptional() @ValidateNested() @Type(() => HooksConfig)
  hooks?: HooksConfig;

  @IsOptional() @IsString() @MaxLength(4096) @Matches(NO_NUL, { message: '$property must not contain NUL' })
  @Matches(ABSOLUTE_OR_EMPTY, { message: '$property must be an absolute path' })
  auto_apply_dir?: string;

  @IsOptional() @IsString() @MaxLength(4096) @Matches(NO_NUL, { message: '$property must not contain NUL' })
  @Matches(ABSOLUTE_OR_EMPTY, { message: '$property must be an absolute path' })
  default_cwd?: string;

  @IsOptional() @ValidateNested() @Type(() => LoopsConfig)
  loops?: LoopsConfig;
  /** The isolation of sessions that do not ask for one; `none` when absent. */
  @IsOptional() @IsIn(ISOLATIONS)
  isolation?: Isolation;

  @IsOptional() @ValidateNested() @Type(() => WorktreeConfig)
  worktree?: WorktreeConfig;
  @IsOptional() @ValidateNested() @Type(() => ProfileBudgetConfig) budget?: ProfileBudgetConfig;

  /** What its workers may do in Brainstem's sandbox beyond the defaults (profile-sandbox.ts reads it with them). */
  @IsOptional() @ValidateNested() @Type(() => SandboxConfig)
  sandbox?: SandboxConfig;

  /** What a worker its model's limit refused does: go on at once under another profile (docs/guide/usage.md#a-fallback-profile). */
  @IsOptional() @ValidateNested() @Type(() => OnLimitConfig)
  on_limit?: OnLimitConfig;
}

/** The document as stored on disk and exported. Metadata keys are tolerated so hand-written files stay readable. */
export class ProfileDocument extends ProfileFields {
  @IsProfileName()
  name!: string;

  @IsOptional() @IsIn(RUNTIMES)
  runtime?: Runtime;

  @IsOptional() created_at?: unknown;
  @IsOptional() updated_at?: unknown;
  @IsOptional() source?: unknown;
  @IsOptional() locked?: unknown;
  @IsOptional() owner_pack_id?: unknown;
  @IsOptional() scope?: unknown;
}

// ---- The normalized, plain form (defaults applied) that the rest of the service works with ----

export interface McpServer {
  type: McpType;
  command?: string | null;
  args?: string[];
  url?: string | null;
  env?: Record<string, string>;
}

export interface Hook {
  type: HookType;
  command?: string | null;
  url?: string | null;
  prompt?: string | null;
  matcher?: string | null;
  timeout: number;
}

export interface Skill {
  name: string;
  source: SkillSource;
  path?: string | null;
  version?: string | null;
}

export interface ProfileDoc {
  version: number;
  name: string;
  description: string;
  icon: string;
  runtime: Runtime;
  model: { model?: string; provider?: string | null; fallback?: string[]; options?: Record<string, unknown> };
  instructions: { system_prompt?: string; files?: string[]; rules?: Array<{ glob: string; instruction: string }> };
  tools: { builtin?: string[]; mcp_servers?: Record<string, McpServer>; deny?: string[] };
  permissions: { mode: PermissionMode; allow: string[]; deny: string[]; ask: string[] };
  skills: Skill[];
  hooks: Partial<Record<HookEvent, Hook[]>>;
  auto_apply_dir: string;
  default_cwd: string;
  /** Overrides of the service's loop thresholds; absent when the profile sets none. */
  loops?: Partial<Record<keyof LoopsConfig, number>>;
  /** Absent in profiles that set none: sessions then run without isolation. */
  isolation?: Isolation;
  worktree?: { setup?: string; copy?: string[] };
  /** What its sessions may spend; absent when the profile sets no budget. */
  budget?: ProfileBudget;
  /** As written (absent when the profile has none); profileSandbox() reads it with the defaults. */
  sandbox?: ProfileSandboxSection;
  /** The profile a worker its model's limit parked goes on under; absent when none. */
  on_limit?: { fallback_profile: string };
}

/** The profile's `sandbox` section as written: every field optional. */
export interface ProfileSandboxSection {
  allow_write?: string[];
  deny_read?: string[];
  network?: { allow?: string[]; deny?: string[] };
  auto_allow_bash?: boolean;
}

export const HOOK_TIMEOUT_DEFAULT_S = 60;

export type ParseResult = { ok: true; doc: ProfileDoc; metadataKeys: MetadataField[] } | { ok: false; errors: string[] };

/** The document's rules as one walk (dto-plain.ts), compiled on first use, once every class is decorated. */
let documentPlain: DtoPlain | null | undefined;

/**
 * Validates a plain object (parsed YAML or a REST body renamed to YAML names) and applies the defaults. A valid document
 * takes the one walk; anything it cannot vouch for goes through class-transformer and class-validator, whose errors
 * name the field (profile-plain.spec.ts holds the two to the same answers).
 */
export function parseProfileDocument(raw: unknown): ParseResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, errors: ['(document): must be a mapping'] };
  const inherited = inheritedKeyProblem(raw);
  if (inherited !== null) return { ok: false, errors: [inherited] };
  const metadataKeys = METADATA_FIELDS.filter((k) => (raw as Record<string, unknown>)[k] !== undefined);
  const plain = (documentPlain ??= dtoPlain(ProfileDocument))?.(raw) ?? null;
  if (plain !== null) return { ok: true, doc: normalizeDocument(plain as Partial<ProfileDoc> & { name: string }), metadataKeys };
  const instance = plainToInstance(ProfileDocument, raw);
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) return { ok: false, errors: describeValidationErrors(errors) };
  return { ok: true, doc: normalizeDocument(toPlain(instance) as Partial<ProfileDoc> & { name: string }), metadataKeys };
}

/** The defaults of docs/architecture/decisions.md#agent-profile-document, in its field order (which is also the order written to disk). */
export function normalizeDocument(d: Partial<ProfileDoc> & { name: string }): ProfileDoc {
  const permissions: Partial<ProfileDoc['permissions']> = d.permissions ?? {};
  const hooks: ProfileDoc['hooks'] = {};
  for (const event of HOOK_EVENTS) {
    const handlers = d.hooks?.[event];
    if (handlers) hooks[event] = handlers.map((h) => ({ ...h, timeout: h.timeout ?? HOOK_TIMEOUT_DEFAULT_S }));
  }
  return {
    version: d.version ?? 1,
    name: d.name,
    description: d.description ?? '',
    icon: d.icon ?? 'bot',
    runtime: d.runtime ?? 'auto',
    model: d.model ?? {},
    instructions: d.instructions ?? {},
    tools: d.tools ?? {},
    permissions: {
      mode: permissions.mode ?? 'acceptEdits',
      allow: permissions.allow ?? [],
      deny: permissions.deny ?? [],
      ask: permissions.ask ?? [],
    },
    skills: (d.skills ?? []).map((s) => ({ ...s, source: s.source ?? 'local' })),
    hooks,
    auto_apply_dir: d.auto_apply_dir ?? '',
    default_cwd: d.default_cwd ?? '',
    ...(d.loops && Object.keys(d.loops).length > 0 ? { loops: d.loops } : {}),
    // Only when set, so profiles written before isolation read and write back as they were.
    ...(d.isolation ? { isolation: d.isolation } : {}),
    ...(d.worktree ? { worktree: d.worktree } : {}),
    ...normalizeBudget(d.budget),
    // Only when set, as isolation: a profile without one reads and writes back as it was.
    ...(d.sandbox ? { sandbox: d.sandbox } : {}),
    ...(d.on_limit ? { on_limit: { fallback_profile: d.on_limit.fallback_profile } } : {}),
  };
}
