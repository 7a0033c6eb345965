export type ScopeMode = 'all' | 'only' | 'except' | 'invert';
/** Main-brain tools offer these; `invert` is REST/UI only. */
export type ToolScopeMode = Exclude<ScopeMode, 'invert'>;

export interface ScopeSession {
  id: string;
  alias: string;
  excluded: boolean;
  /** Not exited. `only` excludes every other active session. */
  active: boolean;
  /** A claude started outside Brainstem: brought into supervision only as ExternalInclusion allows. */
  external?: boolean;
}

/**
 * Which external sessions a scope may bring into supervision (any scope may take one out): none (the main brain's
 * requests), those it names (the user's), or all of them (the user's `include_external: true`).
 */
export type ExternalInclusion = 'none' | 'named' | 'all';

export interface ScopePlan {
  mode: ScopeMode;
  /** The exclusion flag each affected session must get. */
  changes: Array<{ id: string; excluded: boolean }>;
  unknown_ids: string[];
}

/** A scope that names no session it could apply to: nothing is planned. */
export interface ScopeRefusal {
  error: { code: 'scope_names_no_session'; message: string };
}

/** A session reference: the full `cs_` id or the short alias (`w3`). */
export function findSession<S extends { id: string; alias: string }>(sessions: readonly S[], ref: string): S | undefined {
  const r = ref.trim();
  return sessions.find((s) => s.id === r || s.alias === r.toLowerCase());
}

/**
 * Plans a scope change. `only` and `except` that name no valid session are
 * refused, so a wrong scope is never stored silently.
 */
export function planScope(mode: ScopeMode, ids: readonly string[], sessions: readonly ScopeSession[], externals: ExternalInclusion = 'none'): ScopePlan | ScopeRefusal {
  const found = new Map<string, ScopeSession>();
  const unknown: string[] = [];
  for (const ref of ids) {
    const s = findSession(sessions, ref);
    if (s) found.set(s.id, s);
    else unknown.push(ref);
  }
  // only/except scope active sessions: naming only exited ones would leave `only` watching nothing.
  // invert flips whatever the UI shows, exited sessions included.
  const exited = mode === 'invert' ? [] : [...found.values()].filter((s) => !s.active);
  if (mode !== 'all' && found.size === exited.length) {
    const why = [unknown.length ? `unknown: ${unknown.join(', ')}` : '', exited.length ? `exited: ${exited.map((s) => s.alias).join(', ')}` : ''].filter(Boolean);
    return { error: { code: 'scope_names_no_session', message: `session_ids: mode ${mode} needs at least one valid session id${why.length ? ` (${why.join('; ')})` : ''}` } };
  }
  const want = (s: ScopeSession): boolean | undefined => {
    switch (mode) {
      case 'all':
        return false;
      case 'only':
        return found.has(s.id) ? false : s.active ? true : undefined;
      case 'except':
        return found.has(s.id);
      case 'invert':
        return found.has(s.id) ? !s.excluded : undefined;
    }
  };
  // External sessions join only by the user's choice: a scope brings in those it may, and takes out any.
  const mayJoin = (s: ScopeSession) => !s.external || externals === 'all' || (externals === 'named' && found.has(s.id));
  const changes: ScopePlan['changes'] = [];
  for (const s of sessions) {
    const excluded = want(s);
    if (excluded !== undefined && excluded !== s.excluded && (excluded || mayJoin(s))) changes.push({ id: s.id, excluded });
  }
  return { mode, changes, unknown_ids: mode === 'all' ? [] : unknown };
}

/** `include_external: true`: every live external session that is excluded joins supervision. */
export function includeExternalChanges(sessions: readonly ScopeSession[]): ScopePlan['changes'] {
  return sessions.filter((s) => s.external && s.active && s.excluded).map((s) => ({ id: s.id, excluded: false }));
}
