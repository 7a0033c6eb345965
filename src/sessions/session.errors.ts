declare module '../common/domain-error' {
  interface DomainErrorStatus {
    session_exited: 409;
    session_not_started: 409;
    session_stopping: 409;
    session_held: 409;
    permission_pending: 409;
    permission_not_pending: 409;
    message_not_deliverable: 409;
    denied_by_profile: 403;
    network_allow_needs_user: 403;
    permission_wait_abandoned: 409;
    hook_not_waiting: 409;
    session_external: 409;
    max_sessions_reached: 429;
    budget_exhausted: 409;
    unknown_profile: 400;
    unknown_runtime: 400;
    runtime_not_installed: 400;
    command_required: 400;
    command_not_executable: 400;
    command_not_taken: 400;
    cwd_required: 400;
    cwd_not_absolute: 400;
    cwd_not_a_directory: 400;
    owner_unavailable: 503;
    sandbox_unavailable: 409;
    session_not_parked: 409;
  }
}

/**
 * The coding sessions' error codes and their statuses. State rules (409): the session has exited, its worker has not
 * started yet, it is being stopped, it is held (a loop or a budget: released by the user), a permission request is pending (messages wait), none (or not the named one) is
 * pending, the worker cannot take a message (detached after a restart, stdin closed), a worker's permission_prompt
 * call went away before its request was answered, an external session's claude has no hook waiting for the message or
 * answer, an external session cannot be stopped by Brainstem. 403: a profile's deny rule (or an unreadable profile)
 * refuses an allow; only the user may allow a sandboxed worker's `Network` request. 429: BRAINSTEM_MAX_SESSIONS live sessions. 409 budget_exhausted: a create while today's budget of
 * its profile, or Brainstem's, is spent. 400: a create whose profile, runtime, command or cwd cannot be used.
 * 409 sandbox_unavailable: BRAINSTEM_SANDBOX=required and this machine cannot sandbox the worker (what it lacks is named).
 * 409 session_not_parked: a resume (or keep parked) of a session no limit parked.
 * 503: the session runs on another node sharing the journal, and that node has not been heard from within its lease.
 */
export const SESSION_ERRORS = {
  session_exited: 409,
  session_not_started: 409,
  session_stopping: 409,
  session_held: 409,
  permission_pending: 409,
  permission_not_pending: 409,
  message_not_deliverable: 409,
  denied_by_profile: 403,
  network_allow_needs_user: 403,
  permission_wait_abandoned: 409,
  hook_not_waiting: 409,
  session_external: 409,
  max_sessions_reached: 429,
  budget_exhausted: 409,
  unknown_profile: 400,
  unknown_runtime: 400,
  runtime_not_installed: 400,
  command_required: 400,
  command_not_executable: 400,
  command_not_taken: 400,
  cwd_required: 400,
  cwd_not_absolute: 400,
  cwd_not_a_directory: 400,
  owner_unavailable: 503,
  sandbox_unavailable: 409,
  session_not_parked: 409,
} as const;

export type SessionErrorCode = keyof typeof SESSION_ERRORS;
