import { PeerRefused, PeerUnreachable } from '../cluster/peer-client';
import { DomainError } from '../common/domain-error';
import { ownerDiffError } from './session-worktrees';

describe('ownerDiffError', () => {
  const fields = (e: unknown) => (e instanceof DomainError ? { code: e.code, message: e.message, details: e.details } : e);

  it("Given the owner's refusal of the worktree's state or of the session, Then it is answered as the owner gave it: code, message, details", () => {
    const missing = new PeerRefused('a', 409, 'worktree_missing', 'the worktree of w1 (/x) was deleted by hand', { path: '/x', branch: 'brainstem/w1' });
    expect(fields(ownerDiffError(missing, 'w1', 'a'))).toEqual({ code: 'worktree_missing', message: 'the worktree of w1 (/x) was deleted by hand', details: { path: '/x', branch: 'brainstem/w1' } });
    expect(fields(ownerDiffError(new PeerRefused('a', 409, 'worktree_not_ready', 'still being prepared'), 'w1', 'a'))).toEqual({ code: 'worktree_not_ready', message: 'still being prepared', details: undefined });
    expect(fields(ownerDiffError(new PeerRefused('a', 400, 'path_outside_tree', 'file: leads out'), 'w1', 'a'))).toMatchObject({ code: 'path_outside_tree' });
    expect(fields(ownerDiffError(new PeerRefused('a', 404, 'not_found', 'no session w9'), 'w1', 'a'))).toMatchObject({ code: 'not_found', message: 'no session w9' });
  });

  it('Given a refusal of the credential, a code this node does not know or with another status, or no answer, Then 503 owner_unavailable naming the owner, with why', () => {
    const cases: Array<[unknown, string]> = [
      [new PeerRefused('a', 403, 'permission_denied', 'node b may not call GET /api/v1/coding-sessions/:id/diff'), 'it answered 403 permission_denied: node b may not call'],
      [new PeerRefused('a', 401, 'unauthorized', 'invalid credential'), 'it answered 401 unauthorized: invalid credential'],
      [new PeerRefused('a', 409, 'something_newer', 'a newer refusal'), 'it answered 409 something_newer: a newer refusal'],
      [new PeerRefused('a', 503, 'worktree_missing', 'wrong status'), 'it answered 503 worktree_missing: wrong status'],
      [new PeerRefused('a', 502, null, '502 Bad Gateway'), 'it answered 502: 502 Bad Gateway'],
      [new PeerUnreachable('a', 'node a at http://127.0.0.1:1 did not answer: ECONNREFUSED'), 'did not answer: ECONNREFUSED'],
    ];
    for (const [e, why] of cases) {
      const answered = fields(ownerDiffError(e, 'w1', 'a')) as { code: string; message: string; details: unknown };
      expect([answered.code, answered.details]).toEqual(['owner_unavailable', { node: 'a' }]);
      expect(answered.message).toContain('the worktree of session w1 is on node a, which could not give its diff: ');
      expect(answered.message).toContain(why);
    }
  });

  it('Given an error that is no answer of a node, Then it is thrown as it is', () => {
    const e = new TypeError('a bug');
    expect(ownerDiffError(e, 'w1', 'a')).toBe(e);
  });
});
