import { BuiltinTemplate } from './builtin-template';
import { codeReviewer } from './code-reviewer';
import { codingAssistant } from './coding-assistant';
import { devopsEngineer } from './devops-engineer';
import { documentationWriter } from './documentation-writer';
import { frontendDeveloper } from './frontend-developer';
import { pairProgrammer } from './pair-programmer';
import { researcher } from './researcher';
import { securityAuditor } from './security-auditor';

export { BUILTIN_TEMPLATES_RELEASED_AT, BuiltinTemplate } from './builtin-template';

/** The seed's built-in templates, in the seed's order. */
export const BUILTIN_TEMPLATES: readonly BuiltinTemplate[] = [
  codingAssistant,
  codeReviewer,
  researcher,
  securityAuditor,
  frontendDeveloper,
  documentationWriter,
  devopsEngineer,
  pairProgrammer,
];

/** Used when neither the session nor the settings name a profile. */
export const DEFAULT_PROFILE_ID = codingAssistant.id;
