/** Typed domain error codes; the HTTP exception filter is the one place that maps them to statuses. */
export type DomainErrorCode =
  | 'invalid_input'
  | 'not_found'
  | 'conflict'
  | 'unauthorized'
  | 'permission_denied'
  | 'host_not_allowed'
  | 'origin_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'too_many_requests'
  | 'not_implemented'
  | 'session_exited'
  | 'profile_locked'
  | 'profile_name_taken'
  | 'profile_malformed'
  | 'profile_has_errors'
  | 'apply_drift'
  | 'apply_path_refused'
  | 'journal_conflict'
  | 'journal_corrupt'
  | 'journal_locked'
  | 'journal_closed'
  | 'journal_invalid_event';

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
