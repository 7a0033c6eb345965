declare module '../common/domain-error' {
  interface DomainErrorStatus {
    claude_settings_malformed: 409;
    hooks_path_refused: 400;
  }
}

/**
 * The external sessions' error codes and their statuses: a Claude Code settings file whose hooks claude would not read
 * as hooks (409: fix it first, nothing is written), a settings path that leads through a symlink or out of its folder
 * (400). The codes of the sessions themselves (hook_not_waiting, session_external) are the sessions'.
 */
export const EXTERNAL_ERRORS = {
  claude_settings_malformed: 409,
  hooks_path_refused: 400,
} as const;

export type ExternalErrorCode = keyof typeof EXTERNAL_ERRORS;
