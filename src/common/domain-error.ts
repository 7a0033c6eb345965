/**
 * Every domain error code with its HTTP status. The codes every feature shares are here; each feature adds its own
 * (`src/<feature>/<feature>.errors.ts`) by declaration merging, so this layer imports no feature:
 *
 *     declare module '../common/domain-error' {
 *       interface DomainErrorStatus { session_exited: 409 }
 *     }
 *
 * and exports the same pairs as a value (`SESSION_ERRORS`), which the HTTP layer merges into the one status map: a
 * code without a status does not compile.
 */
export interface DomainErrorStatus {
  invalid_input: 400;
  not_found: 404;
  conflict: 409;
  unauthorized: 401;
  permission_denied: 403;
  host_not_allowed: 403;
  origin_not_allowed: 403;
  payload_too_large: 413;
  unsupported_media_type: 415;
  too_many_requests: 429;
  not_implemented: 501;
  journal_conflict: 409;
  journal_corrupt: 500;
  journal_locked: 503;
  journal_closed: 503;
  journal_unavailable: 503;
  journal_invalid_event: 400;
  journal_fenced: 503;
  journal_schema_mismatch: 503;
}

export type DomainErrorCode = keyof DomainErrorStatus;

/** The shared codes' statuses, as a value. */
export const COMMON_ERRORS = {
  invalid_input: 400,
  not_found: 404,
  conflict: 409,
  unauthorized: 401,
  permission_denied: 403,
  host_not_allowed: 403,
  origin_not_allowed: 403,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  not_implemented: 501,
  journal_conflict: 409,
  journal_corrupt: 500,
  journal_locked: 503,
  journal_closed: 503,
  journal_unavailable: 503,
  journal_invalid_event: 400,
  journal_fenced: 503,
  journal_schema_mismatch: 503,
} as const;

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
