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
