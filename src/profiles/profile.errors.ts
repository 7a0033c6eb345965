declare module '../common/domain-error' {
  interface DomainErrorStatus {
    profile_locked: 409;
    profile_name_taken: 409;
    profile_malformed: 409;
    profile_has_errors: 422;
    apply_drift: 409;
    apply_path_refused: 400;
    /** A runtime config file in the target exists but does not parse, or is not an object: apply will not merge into it. */
    apply_target_malformed: 409;
    /** A target or scanned directory that does not exist, is not a directory or cannot be written. */
    dir_unusable: 400;
    /** `runtime: auto` and none of the runtimes' executables is on PATH. */
    runtime_not_found: 422;
    /** A local skill over the copy limits (files or bytes). */
    skill_too_large: 422;
    /** The scanned project holds none of the runtime files asked for. */
    scan_found_nothing: 422;
    /** The scanned files do not make a profile the schema accepts. */
    scan_invalid_profile: 422;
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
  apply_target_malformed: 409,
  dir_unusable: 400,
  runtime_not_found: 422,
  skill_too_large: 422,
  scan_found_nothing: 422,
  scan_invalid_profile: 422,
} as const;
