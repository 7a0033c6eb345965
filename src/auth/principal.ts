/**
 * Who is calling, as its credential proves: the user (the API token: everything), the main brain (its own token:
 * the main-brain tools), one worker (a token minted for its session: that session's worker tools and signals), or one
 * action link (a capability minted for one notification action: that action, once, and nothing else).
 */
export type Principal = { kind: 'user' } | { kind: 'main_brain' } | { kind: 'worker'; session_id: string } | { kind: 'action'; capability_id: string };

export type PrincipalKind = Principal['kind'];

export function describePrincipal(p: Principal): string {
  if (p.kind === 'worker') return `the worker of session ${p.session_id}`;
  if (p.kind === 'action') return `the action link ${p.capability_id}`;
  return p.kind === 'main_brain' ? 'the main brain' : 'the user';
}
