import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
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
} from 'class-validator';
import { DomainError } from '../common/domain-error';
import { MAX_TEXT_BYTES, RequiredText, Text, fitsTextLimit } from '../common/text-limit';
import { Describe } from '../common/dto-schema';
import { PathField } from '../common/path-field';
import { parseDto } from '../common/validation-errors';
import { PageQueryDto } from '../http/page.dto';
import { QueryInt } from '../common/query-int';
import { ProfileId } from '../profiles/profile.dto';
import { ISOLATIONS, Isolation } from '../profiles/profile.schema';
import { REF_INPUT_PATTERN } from '../worktrees/worktree-names';
import { MAX_DIFF_LINES } from '../worktrees/diff-page';
import { MERGE_STRATEGIES, MergeStrategy } from '../worktrees/merge-plan';
import { JsonObject, NETWORK_SCOPES, NetworkScope, PermissionDecision, ProgressStatus, SessionState } from './session.events';
import { hostProblem } from './network-hosts';
import { BudgetDto } from '../usage/budget.dto';

export { MAX_TEXT_BYTES, fitsTextLimit } from '../common/text-limit';

/**
 * A text cut to MAX_TEXT_BYTES of UTF-8 with a note saying so, for what a runtime reports (a turn's result), which
 * cannot be refused like a request. Cut on a character boundary.
 */
export function clipToTextLimit(text: string): string {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= MAX_TEXT_BYTES) return text;
  const note = `\n[brainstem: cut to 64 KiB of ${bytes} bytes]`;
  const head = Buffer.from(text, 'utf8').subarray(0, MAX_TEXT_BYTES - Buffer.byteLength(note, 'utf8')).toString('utf8');
  // A character split by the cut decodes as U+FFFD: drop it.
  return head.replace(/\uFFFD$/, '') + note;
}


const NO_NUL = /^[^\0]*$/;
const NO_NUL_MESSAGE = { message: '$property: must not contain NUL' };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

function IsEnvMap(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isEnvMap',
      validator: {
        validate: (v: unknown) =>
          typeof v === 'object' &&
          v !== null &&
          !Array.isArray(v) &&
          Object.entries(v).every(([k, val]) => ENV_NAME.test(k) && typeof val === 'string' && !val.includes('\0') && fitsTextLimit(val)),
        defaultMessage: () => '$property: must map variable names to strings (no NUL, at most 64 KiB each)',
      },
    },
    options,
  );
}

/** A ref as a request may name it; git itself judges it before it is used (check-ref-format, rev-parse --verify). */
export const GitRef = (): PropertyDecorator => (target, key) => {
  IsString()(target, key);
  Matches(REF_INPUT_PATTERN, { message: '$property: must be a git ref of at most 200 characters, without spaces, control characters or a leading -' })(target, key);
};

/** A session's title. */
export const SessionTitle = (): PropertyDecorator => (target, key) => {
  IsString()(target, key);
  MaxLength(200)(target, key);
};

/** A session named by its cs_ id or alias (w1, w2, …). */
export const SessionRef = (): PropertyDecorator => (target, key) => {
  IsString()(target, key);
  IsNotEmpty()(target, key);
  MaxLength(100)(target, key);
};

/** The most output lines a tail may ask for. */
export const MAX_OUTPUT_TAIL = 10_000;

export const SESSION_STATES: readonly SessionState[] = ['starting', 'working', 'pending_handling', 'pending_authorization', 'pending_decision', 'exited'];
export const PROGRESS_STATUSES: readonly ProgressStatus[] = ['working', 'completed', 'blocked', 'needs_review'];

export class CreateSessionDto {
  @IsOptional() @SessionTitle() title?: string;
  @IsOptional() @IsString() @Matches(/^[a-z0-9][a-z0-9-]{0,39}$/, { message: 'runtime: must be a runtime name such as auto, command or claude-code' })
  runtime?: string;
  @IsOptional() @ProfileId() profile_id?: string;
  /** Optional: the profile's default_cwd is used without one. */
  @IsOptional() @PathField() cwd?: string;
  @IsOptional() @Text() prompt?: string;
  @IsOptional() @PathField() command?: string;
  @IsOptional() @IsArray() @ArrayMaxSize(256) @IsString({ each: true }) @Matches(NO_NUL, { each: true, ...NO_NUL_MESSAGE }) args?: string[];
  @IsOptional() @IsEnvMap() env?: Record<string, string>;
  @IsOptional() @IsBoolean() excluded?: boolean;
  /** `worktree`: the worker gets a git worktree of its own; the profile's isolation (else `none`) when absent. */
  @IsOptional() @IsIn(ISOLATIONS) isolation?: Isolation;
  @IsOptional() @GitRef() @Describe('With isolation worktree: the commit-ish the new branch starts from (default: the checkout\'s HEAD).') base_ref?: string;
  @IsOptional() @GitRef() @Describe('With isolation worktree: an existing branch to work on (in the worktree that has it, else a new one).') branch?: string;
  @IsOptional() @PathField() @Describe('With isolation worktree: an existing worktree of the repository to work in.') worktree?: string;
  /** The session's own budget; without one, its profile's per-session budget applies. */
  @IsOptional() @ValidateNested() @Type(() => BudgetDto) budget?: BudgetDto;
}

export class ListSessionsQueryDto extends PageQueryDto {
  @IsOptional() @IsIn(SESSION_STATES) state?: SessionState;
  @IsOptional()
  @Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean({ message: 'excluded: must be true or false' })
  excluded?: boolean;
}

export class OutputQueryDto {
  @IsOptional() @QueryInt() @IsInt() @Min(1) @Max(MAX_OUTPUT_TAIL) tail?: number;
}

export class MessageDto {
  @RequiredText() text!: string;
}

export class PermissionDto {
  @IsIn(['allow', 'deny']) decision!: PermissionDecision;
  @IsOptional() @Text() reason?: string;
  /** Which pending request; the oldest when absent. */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) @Describe('Which pending request (its request_id); the oldest when absent.') request_id?: string;
}

/** The user's answer (POST …/permission): a `Network` request's allow may reach further than this connection. */
export class UserPermissionDto extends PermissionDto {
  @IsOptional()
  @IsIn(NETWORK_SCOPES)
  @Describe('Only on a Network request: once (the default), session (this host:port for the rest of the session) or profile (the host added to the profile\'s sandbox.network.allow).')
  scope?: NetworkScope;
}

/** A host a sandboxed worker connects to: a hostname, an IPv4 address or an IPv6 one without brackets. */
function IsNetworkHost(): PropertyDecorator {
  return ValidateBy({
    name: 'isNetworkHost',
    validator: {
      validate: (v: unknown) => typeof v === 'string' && hostProblem(v) === null,
      defaultMessage: (args) => `$property: ${typeof args?.value === 'string' ? hostProblem(args.value) : 'must be a string'}`,
    },
  });
}

/** POST …/network-asks: a connection srt asked about (its ask callback), brought by the worker's sandbox launcher. */
export class NetworkAskDto {
  @IsNetworkHost() @Describe('The host the worker connects to: a hostname, an IPv4 address or an IPv6 address without brackets (at most 253 characters).') host!: string;
  @IsInt() @Min(1) @Max(65535) port!: number;
}

/** POST …/network-refusals: a connection srt refused on its own (a deny rule), reported by the launcher. */
export class NetworkRefusalDto extends NetworkAskDto {
  @RequiredText() reason!: string;
}

export class SupervisionDto {
  @IsBoolean() excluded!: boolean;
}

export class ResumeDto {
  /** Keep it parked until someone resumes it (its timer is disarmed), instead of resuming it now. */
  @IsOptional() @IsBoolean() keep_parked?: boolean;
}

export class StopDto {
  /** How long SIGTERM may take before SIGKILL. */
  @IsOptional() @IsInt() @Min(0) @Max(600_000) grace_ms?: number;
}

// Signals: what a worker (or a runtime hook) reports. One DTO per `type`.
/** What a worker's report_progress says, as a signal and as the tool's arguments. */
export class ProgressFields {
  @IsIn(PROGRESS_STATUSES) status!: ProgressStatus;
  @IsOptional() @Text() message?: string;
}
class ReportProgressSignal extends ProgressFields {
  @IsIn(['report_progress']) type!: 'report_progress';
}
export class BlockedFields {
  @RequiredText() reason!: string;
}
class NotifyBlockedSignal extends BlockedFields {
  @IsIn(['notify_blocked']) type!: 'notify_blocked';
}
export class QuestionFields {
  @RequiredText() question!: string;
}
class AskHumanSignal extends QuestionFields {
  @IsIn(['ask_human']) type!: 'ask_human';
}
export class ContextQueryFields {
  @RequiredText() query!: string;
}
class RequestContextSignal extends ContextQueryFields {
  @IsIn(['request_context']) type!: 'request_context';
}
class TurnEndedSignal {
  @IsIn(['turn_ended']) type!: 'turn_ended';
  @IsOptional() @Text() result?: string;
}
class PermissionRequestSignal {
  @IsIn(['permission_request']) type!: 'permission_request';
  @IsString() @IsNotEmpty() @MaxLength(200) tool!: string;
  @IsOptional() @IsObject() input?: JsonObject;
}

export const SIGNALS = {
  report_progress: ReportProgressSignal,
  notify_blocked: NotifyBlockedSignal,
  ask_human: AskHumanSignal,
  request_context: RequestContextSignal,
  turn_ended: TurnEndedSignal,
  permission_request: PermissionRequestSignal,
} as const;

export type SignalType = keyof typeof SIGNALS;
export type Signal = { [K in SignalType]: InstanceType<(typeof SIGNALS)[K]> }[SignalType];

/** A session request made in code (the main brain's start_session), held to the same rules as POST /coding-sessions. */
export function parseCreateSession(body: object): CreateSessionDto {
  return parseDto(CreateSessionDto, body);
}

/** Named in the refusal of an unknown type. */
const SIGNAL_TYPES = Object.keys(SIGNALS).join(', ');

/** The signals body is a union discriminated by `type`: the DTO is chosen by it, then validated strictly. */
export function parseSignal(body: unknown): Signal {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new DomainError('invalid_input', 'body: must be a JSON object');
  const type = (body as { type?: unknown }).type;
  if (typeof type !== 'string' || !Object.hasOwn(SIGNALS, type)) throw new DomainError('invalid_input', `type: must be one of ${SIGNAL_TYPES}`);
  const cls: new () => object = SIGNALS[type as SignalType];
  return parseDto(cls, body) as Signal;
}

export class DiffQueryDto {
  /** Only this file's patch: a path in the tree, relative to its top folder. */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(4096) file?: string;
  /** The next_cursor of the page before. */
  @IsOptional() @IsString() @Matches(/^\d{1,6}\.\d{1,7}$/, { message: 'cursor: must be a next_cursor this route gave' }) cursor?: string;
  /** Patch lines in the page at most. */
  @IsOptional() @QueryInt() @IsInt() @Min(1) @Max(MAX_DIFF_LINES) limit?: number;
}

export class MergeDto {
  @IsIn(MERGE_STRATEGIES) @Describe('ff: fast-forward only; merge: a merge commit; rebase: the commits replayed on the base.') strategy!: MergeStrategy;
}

export class RemoveWorktreeDto {
  /** Remove it even with uncommitted changes: they are lost. */
  @IsOptional() @IsBoolean() force?: boolean;
}
