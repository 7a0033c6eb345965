import { PendingAttention, pendingAttention } from './attention';
import { SessionView } from './session-directory.port';
import { ScopeMode, ToolScopeMode } from './supervision-scope';
import { SupervisionState, isOn } from './supervision.decider';
import { SupervisionContext } from './supervision.machine';

/** The state object of GET …/autonomous: enabled, turns_used, max_turns, task_hint, and how supervision started, closed and is scoped. */
export type AutonomousView = Pick<SupervisionContext, 'turns_used' | 'max_turns' | 'task_hint' | 'started_by' | 'closed_reason' | 'summary'> & {
  enabled: boolean;
  round_in_flight: string | null;
  scope: ScopeView;
  /** Supervised sessions that wait on someone and that no round has named since that began, the longest waiting first. */
  pending: PendingAttention[];
};

/** Which sessions wake the brain: the rule for sessions created later (the last mode set other than invert) and the live sessions on each side. */
export interface ScopeView {
  mode: ToolScopeMode;
  /** Whether external sessions reporting later join supervision (the user's include_external). */
  include_external: boolean;
  supervised: string[];
  excluded: string[];
}

export interface ScopeResult {
  mode: ScopeMode;
  supervised: string[];
  excluded: string[];
  unknown_ids: string[];
}

/** The live sessions on each side of the scope. */
export function scopeLists(sessions: readonly SessionView[]): { supervised: string[]; excluded: string[] } {
  const active = sessions.filter((s) => s.active);
  return { supervised: active.filter((s) => !s.excluded).map((s) => s.id), excluded: active.filter((s) => s.excluded).map((s) => s.id) };
}

export function scopeView(s: SupervisionState, sessions: readonly SessionView[]): ScopeView {
  return { mode: s.scope_mode, include_external: s.include_external, ...scopeLists(sessions) };
}

/** GET …/autonomous: null until supervision was first enabled. */
export function autonomousView(s: SupervisionState, sessions: readonly SessionView[]): { autonomous: AutonomousView | null } {
  const c = s.machine.context;
  if (!c.ever_enabled) return { autonomous: null };
  return {
    autonomous: {
      enabled: isOn(s),
      turns_used: c.turns_used,
      max_turns: c.max_turns,
      task_hint: c.task_hint,
      started_by: c.started_by,
      closed_reason: c.closed_reason,
      summary: c.summary,
      round_in_flight: c.round?.id ?? null,
      scope: scopeView(s, sessions),
      pending: pendingAttention(sessions, s.covered),
    },
  };
}
