import { STATUS_CODES } from 'node:http';
import { ValidationError } from 'class-validator';
import { DomainError, DomainErrorCode } from '../common/domain-error';
import { JournalError } from '../journal/journal.port';

const STATUS: Record<DomainErrorCode, number> = {
  invalid_input: 400,
  unauthorized: 401,
  permission_denied: 403,
  host_not_allowed: 403,
  origin_not_allowed: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  not_implemented: 501,
  session_exited: 409,
  profile_locked: 409,
  profile_name_taken: 409,
  profile_malformed: 409,
  profile_has_errors: 422,
  apply_drift: 409,
  apply_path_refused: 400,
  journal_conflict: 409,
  journal_invalid_event: 400,
  journal_corrupt: 500,
  journal_locked: 503,
  journal_closed: 503,
};

export interface ErrorBody {
  statusCode: number;
  error: string;
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export function errorBody(statusCode: number, code: string, message: string, details?: Record<string, unknown>): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', code, message, ...(details ? { details } : {}) };
}

export function domainErrorBody(e: DomainError | JournalError): ErrorBody {
  return errorBody(STATUS[e.code], e.code, e.message, e instanceof DomainError ? e.details : undefined);
}

/** class-validator errors as one readable line: "tools.mcp_servers.x.type: must be one of stdio, http". */
export function describeValidationErrors(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((e) => {
    const path = parent ? (/^\d+$/.test(e.property) ? `${parent}[${e.property}]` : `${parent}.${e.property}`) : e.property;
    // class-validator starts its messages with the property name; a string prefix, since a name is user text.
    const own = Object.values(e.constraints ?? {}).map((m) => `${path}: ${m.startsWith(`${e.property} `) ? m.slice(e.property.length + 1) : m}`);
    return [...own, ...describeValidationErrors(e.children ?? [], path)];
  });
}
