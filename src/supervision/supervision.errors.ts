import { DomainError } from '../common/domain-error';

declare module '../common/domain-error' {
  interface DomainErrorStatus {
    supervision_off: 409;
    round_not_found: 404;
    round_already_ended: 409;
    round_in_flight: 409;
    max_turns_reached: 409;
    scope_names_no_session: 400;
    not_supervisor: 503;
  }
}

/** Supervision's error codes and their statuses. */
export const SUPERVISION_ERRORS = {
  supervision_off: 409,
  round_not_found: 404,
  round_already_ended: 409,
  round_in_flight: 409,
  max_turns_reached: 409,
  scope_names_no_session: 400,
  not_supervisor: 503,
} as const;

export type SupervisionErrorCode = keyof typeof SUPERVISION_ERRORS;

/** No such round in memory: ended rounds leave it after the retention, which the message says when there is one. */
export function roundNotFound(id: string, retention_s: number | undefined): DomainError {
  const why = retention_s === undefined ? '' : ` (ended rounds leave memory ${retention_s} s after they end, BRAINSTEM_RETENTION_S; the journal keeps them, stream supervision)`;
  return new DomainError('round_not_found', `no round ${id}${why}`);
}
