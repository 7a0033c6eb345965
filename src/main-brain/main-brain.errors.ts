declare module '../common/domain-error' {
  interface DomainErrorStatus {
    confirmation_not_found: 404;
    confirmation_exists: 409;
    confirmation_expired: 409;
    confirmation_already_decided: 409;
    confirmation_not_running: 409;
    question_not_found: 404;
    question_already_answered: 409;
  }
}

/** The main brain's error codes (its human gate's confirmations, the chat's answers, the workers' tools) and their statuses. */
export const MAIN_BRAIN_ERRORS = {
  confirmation_not_found: 404,
  confirmation_exists: 409,
  confirmation_expired: 409,
  confirmation_already_decided: 409,
  confirmation_not_running: 409,
  question_not_found: 404,
  question_already_answered: 409,
} as const;

export type MainBrainErrorCode = keyof typeof MAIN_BRAIN_ERRORS;
