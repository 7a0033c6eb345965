/**
 * Who is calling, as its credential proves: the user (the API token: everything), the main brain (its own token:
 * the main-brain tools) or one worker (a token minted for its session: that session's worker tools and signals).
 */
export type Principal = { kind: 'user' } | { kind: 'main_brain' } | { kind: 'worker'; session_id: string };

export type PrincipalKind = Principal['kind'];

export function describePrincipal(p: Principal): string {
  return p.kind === 'worker' ? `the worker of session ${p.session_id}` : p.kind === 'main_brain' ? 'the main brain' : 'the user';
}
