declare module '../common/domain-error' {
  interface DomainErrorStatus {
    run_not_found: 404;
    run_already_started: 409;
    run_already_converged: 409;
    run_session_unknown: 400;
  }
}

/** The workflow runs' error codes and their statuses. */
export const WORKFLOW_ERRORS = {
  run_not_found: 404,
  run_already_started: 409,
  run_already_converged: 409,
  run_session_unknown: 400,
} as const;

export type WorkflowErrorCode = keyof typeof WORKFLOW_ERRORS;
