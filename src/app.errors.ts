import { COMMON_ERRORS } from './common/domain-error';
import { EXTERNAL_ERRORS } from './external/external.errors';
import { ErrorStatusTable, ErrorStatuses } from './http/http-errors';
import { MAIN_BRAIN_ERRORS } from './main-brain/main-brain.errors';
import { NOTIFICATION_ERRORS } from './notifications/notifications.errors';
import { PROFILE_ERRORS } from './profiles/profile.errors';
import { SESSION_ERRORS } from './sessions/session.errors';
import { SUPERVISION_ERRORS } from './supervision/supervision.errors';
import { WORKFLOW_ERRORS } from './workflows/workflow.errors';
import { WORKTREE_ERRORS } from './worktrees/worktree.errors';

/** Every domain error code with its status, the shared ones and each feature's (OpenAPI and the README list them). */
export const ERROR_STATUSES: ErrorStatusTable = {
  ...COMMON_ERRORS,
  ...SESSION_ERRORS,
  ...PROFILE_ERRORS,
  ...SUPERVISION_ERRORS,
  ...WORKFLOW_ERRORS,
  ...MAIN_BRAIN_ERRORS,
  ...NOTIFICATION_ERRORS,
  ...WORKTREE_ERRORS,
  ...EXTERNAL_ERRORS,
};

/** The one instance the exception filter, the authentication hook, the dashboard's files and the MCP endpoint answer with. */
export const errorStatuses = new ErrorStatuses(ERROR_STATUSES);
