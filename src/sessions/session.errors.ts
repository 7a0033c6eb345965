declare module '../common/domain-error' {
  interface DomainErrorStatus {
    session_exited: 409;
  }
}

/** The coding sessions' error codes and their statuses. */
export const SESSION_ERRORS = {
  session_exited: 409,
} as const;
