import { Transform, plainToInstance } from 'class-transformer';
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
  ValidationOptions,
  validateSync,
} from 'class-validator';
import { DomainError } from '../common/domain-error';
import { MAX_TEXT_BYTES, Text, fitsTextLimit } from '../common/text-limit';
import { describeValidationErrors } from '../http/http-errors';
import { PageQueryDto } from '../http/page.dto';
import { QueryInt } from '../common/query-int';
import { PROFILE_ID_PATTERN } from '../profiles/profile.schema';
import { JsonObject, PermissionDecision, ProgressStatus, SessionState } from './session.events';

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

export const SESSION_STATES: readonly SessionState[] = ['starting', 'working', 'pending_handling', 'pending_authorization', 'pending_decision', 'exited'];
export const PROGRESS_STATUSES: readonly ProgressStatus[] = ['working', 'completed', 'blocked', 'needs_review'];

export class CreateSessionDto {
  @IsOptional() @IsString() @MaxLength(200) title?: string;
  @IsOptional() @IsString() @Matches(/^[a-z0-9][a-z0-9-]{0,39}$/, { message: 'runtime: must be a runtime name such as auto, command or claude-code' })
  runtime?: string;
  @IsOptional() @IsString() @Matches(PROFILE_ID_PATTERN, { message: 'profile_id: must be a profile id (lowercase letters, digits, -)' })
  profile_id?: string;
  /** Optional: the profile's default_cwd is used without one. */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(4096) @Matches(NO_NUL, NO_NUL_MESSAGE) cwd?: string;
  @IsOptional() @Text() prompt?: string;
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(4096) @Matches(NO_NUL, NO_NUL_MESSAGE) command?: string;
  @IsOptional() @IsArray() @ArrayMaxSize(256) @IsString({ each: true }) @Matches(NO_NUL, { each: true, ...NO_NUL_MESSAGE }) args?: string[];
  @IsOptional() @IsEnvMap() env?: Record<string, string>;
  @IsOptional() @IsBoolean() excluded?: boolean;
}

export class ListSessionsQueryDto extends PageQueryDto {
  @IsOptional() @IsIn(SESSION_STATES) state?: SessionState;
  @IsOptional()
  @Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean({ message: 'excluded: must be true or false' })
  excluded?: boolean;
}

export class OutputQueryDto {
  @IsOptional() @QueryInt() @IsInt() @Min(1) @Max(10_000) tail?: number;
}

export class MessageDto {
  @Text() @IsNotEmpty() text!: string;
}

export class PermissionDto {
  @IsIn(['allow', 'deny']) decision!: PermissionDecision;
  @IsOptional() @Text() reason?: string;
  /** Which pending request; the oldest when absent. */
  @IsOptional() @IsString() @IsNotEmpty() @MaxLength(200) request_id?: string;
}

export class SupervisionDto {
  @IsBoolean() excluded!: boolean;
}

export class StopDto {
  /** How long SIGTERM may take before SIGKILL. */
  @IsOptional() @IsInt() @Min(0) @Max(600_000) grace_ms?: number;
}

// Signals: what a worker (or a runtime hook) reports. One DTO per `type`.
class ReportProgressSignal {
  @IsIn(['report_progress']) type!: 'report_progress';
  @IsIn(PROGRESS_STATUSES) status!: ProgressStatus;
  @IsOptional() @Text() message?: string;
}
class NotifyBlockedSignal {
  @IsIn(['notify_blocked']) type!: 'notify_blocked';
  @Text() @IsNotEmpty() reason!: string;
}
class AskHumanSignal {
  @IsIn(['ask_human']) type!: 'ask_human';
  @Text() @IsNotEmpty() question!: string;
}
class RequestContextSignal {
  @IsIn(['request_context']) type!: 'request_context';
  @Text() @IsNotEmpty() query!: string;
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
  const dto = plainToInstance(CreateSessionDto, body);
  const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) throw new DomainError('invalid_input', describeValidationErrors(errors).join('; '));
  return dto;
}

/** The signals body is a union discriminated by `type`: the DTO is chosen by it, then validated strictly. */
export function parseSignal(body: unknown): Signal {
  const types = Object.keys(SIGNALS).join(', ');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new DomainError('invalid_input', 'body: must be a JSON object');
  const type = (body as { type?: unknown }).type;
  if (typeof type !== 'string' || !Object.hasOwn(SIGNALS, type)) throw new DomainError('invalid_input', `type: must be one of ${types}`);
  const cls: new () => object = SIGNALS[type as SignalType];
  const signal = plainToInstance(cls, body);
  const errors = validateSync(signal, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) throw new DomainError('invalid_input', describeValidationErrors(errors).join('; '));
  return signal as Signal;
}
