import { SideWrite } from '../journal/command-handler';
import { SessionDirectory } from './session-directory.port';
import { includeExternalChanges, planScope } from './supervision-scope';
import { SupervisionCommand, externalsOf } from './supervision.decider';

/**
 * Each session whose exclusion a scope (set, or given with an enable) changes: its event, at its stream's version, to
 * append with the scope's in one atomic write.
 */
export function scopeExclusionWrites(cmd: SupervisionCommand, sessions: Pick<SessionDirectory, 'list' | 'exclusionWrite'>, actor: string): SideWrite[] {
  const scope = cmd.type === 'enable' || cmd.type === 'set_scope' ? cmd.scope : undefined;
  const plan = scope && planScope(scope.mode, scope.session_ids, scope.sessions, externalsOf(scope));
  const changes = plan && !('error' in plan) ? plan.changes : [];
  const joining = cmd.type === 'enable' && cmd.include_external && !scope ? includeExternalChanges(sessions.list()) : [];
  return [...changes, ...joining].flatMap((c) => sessions.exclusionWrite(c.id, c.excluded, actor) ?? []);
}
