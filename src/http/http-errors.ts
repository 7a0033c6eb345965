import { STATUS_CODES } from 'node:http';
import { DomainError, DomainErrorCode, DomainErrorStatus } from '../common/domain-error';
import { JournalError } from '../journal/journal.port';

/**
 * Every code's status: the shared ones and each feature's, which the features declare by merging into
 * DomainErrorStatus. The app's composition assembles the value (src/app.errors.ts), so this layer imports no feature;
 * a table missing a code, or mapping one to another status than its declaration says, does not compile.
 */
export type ErrorStatusTable = { readonly [K in DomainErrorCode]: DomainErrorStatus[K] };

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

/** Domain errors answered over HTTP, by the table the app was composed with (also its injection token). */
export class ErrorStatuses {
  constructor(readonly table: ErrorStatusTable) {}

  bodyOf(e: DomainError | JournalError): ErrorBody {
    return errorBody(this.table[e.code], e.code, e.message, e instanceof DomainError ? e.details : undefined);
  }
}
