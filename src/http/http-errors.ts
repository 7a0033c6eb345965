import { STATUS_CODES } from 'node:http';
import { COMMON_ERRORS, DomainError, DomainErrorCode, DomainErrorStatus } from '../common/domain-error';
import { MAIN_BRAIN_ERRORS } from '../main-brain/main-brain.errors';
import { PROFILE_ERRORS } from '../profiles/profile.errors';
import { SESSION_ERRORS } from '../sessions/session.errors';
import { SUPERVISION_ERRORS } from '../supervision/supervision.errors';
import { WORKFLOW_ERRORS } from '../workflows/workflow.errors';
import { JournalError } from '../journal/journal.port';

/** Every code's status: the shared ones and each feature's. A code missing here, or mapped to another status than its declaration says, does not compile. */
const STATUS: { [K in DomainErrorCode]: DomainErrorStatus[K] } = {
  ...COMMON_ERRORS,
  ...SESSION_ERRORS,
  ...PROFILE_ERRORS,
  ...SUPERVISION_ERRORS,
  ...WORKFLOW_ERRORS,
  ...MAIN_BRAIN_ERRORS,
};

/** Every domain error code with its status (OpenAPI and the README list them). */
export const ERROR_STATUSES: Readonly<Record<DomainErrorCode, number>> = STATUS;

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

