import { BuiltinTemplate } from './builtin-template';
import { codeReviewer } from './code-reviewer';
import { codingAssistant } from './coding-assistant';
import { devopsEngineer } from './devops-engineer';
import { documentationWriter } from './documentation-writer';
import { frontendDeveloper } from './frontend-developer';
import { mainBrain } from './main-brain';
import { pairProgrammer } from './pair-programmer';
import { researcher } from './researcher';
import { securityAuditor } from './security-auditor';

export { BUILTIN_TEMPLATES_RELEASED_AT, BuiltinTemplate } from './builtin-template';

/** The built-in templates, in the order of docs/architecture/decisions.md#built-in-templates. */
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

/** The main brain's default profile (BRAINSTEM_MAIN_BRAIN_PROFILE): locked like the templates, offered to no worker. */
export const MAIN_BRAIN_PROFILE_ID = mainBrain.id;

/** Every profile shipped with the code: the templates and the main brain's. */
export const BUILTIN_PROFILES: readonly BuiltinTemplate[] = [...BUILTIN_TEMPLATES, mainBrain];
