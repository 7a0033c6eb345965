/**
 * Who is calling, as its credential proves: the user (the API token: everything), the main brain (its own token:
 * the main-brain tools), one worker (a token minted for its session: that session's worker tools and signals), one
 * action link (a capability minted for one notification action: that action, once, and nothing else) or a claude hook
 * (the hook token: only the hook routes, for the claude session each report is bound to) or another node sharing the
 * journal (the credential it made at its start, whose digest it keeps in the database: only the reads a node forwards
 * to the session's owner).
 */
export type Principal =
  | { kind: 'user' }
  | { kind: 'main_brain' }
  | { kind: 'worker'; session_id: string }
  | { kind: 'action'; capability_id: string }
  | { kind: 'hook' }
  | { kind: 'node'; node: string };

export type PrincipalKind = Principal['kind'];

export function describePrincipal(p: Principal): string {
  switch (p.kind) {
    case 'worker':
      return `the worker of session ${p.session_id}`;
    case 'action':
      return `the action link ${p.capability_id}`;
    case 'main_brain':
      return 'the main brain';
    case 'hook':
      return 'a claude hook';
    case 'node':
      return `node ${p.node}`;
    case 'user':
      return 'the user';
  }
}
