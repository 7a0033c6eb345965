declare module '../common/domain-error' {
  interface DomainErrorStatus {
    profile_locked: 409;
    profile_name_taken: 409;
    profile_malformed: 409;
    profile_has_errors: 422;
    apply_drift: 409;
    apply_path_refused: 400;
  }
}

/** The Agent Profiles' error codes and their statuses. */
export const PROFILE_ERRORS = {
  profile_locked: 409,
  profile_name_taken: 409,
  profile_malformed: 409,
  profile_has_errors: 422,
  apply_drift: 409,
  apply_path_refused: 400,
} as const;
