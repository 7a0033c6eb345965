import { ClaimDecision, afterClaim, decideClaim, nextClaimInMs, renewEveryMs, stillLeading } from './lease.rules';

const TTL = 6000;

describe('lease rules', () => {
  it('given no lease row, when a node claims, then it acquires term 1 until now + ttl', () => {
    expect(decideClaim(null, 'a', 1000, TTL)).toEqual({ kind: 'acquire', term: 1, expires_at: 7000 });
  });

  it('given a running lease held by the claimant, when it claims, then it renews with the same term', () => {
    expect(decideClaim({ holder: 'a', term: 3, expires_at: 5000 }, 'a', 4000, TTL)).toEqual({ kind: 'renew', term: 3, expires_at: 10000 });
  });

  it('given a running lease held by another, when a node claims, then it is refused and told the holder and term', () => {
    expect(decideClaim({ holder: 'a', term: 3, expires_at: 5000 }, 'b', 4999, TTL)).toEqual({ kind: 'refused', holder: 'a', term: 3, expires_at: 5000, remaining_ms: 1 });
  });

  it('given an expired lease held by another, when a node claims at its expiry, then it acquires the next term', () => {
    expect(decideClaim({ holder: 'a', term: 3, expires_at: 5000 }, 'b', 5000, TTL)).toEqual({ kind: 'acquire', term: 4, expires_at: 11000 });
  });

  it('given its own lease expired, when the old holder claims again, then it gets a new term rather than renewing', () => {
    expect(decideClaim({ holder: 'a', term: 3, expires_at: 5000 }, 'a', 6000, TTL)).toEqual({ kind: 'acquire', term: 4, expires_at: 12000 });
  });

  it('given a claim sent at t, when it is granted, then the holder leads until t + ttl, not the database expiry', () => {
    const state = afterClaim({ kind: 'renew', term: 2, expires_at: 20000 }, 10000, TTL);
    expect(state).toEqual({ role: 'leader', term: 2, until: 16000 });
    expect(stillLeading(state, 15999)).toBe(true);
    expect(stillLeading(state, 16000)).toBe(false);
  });

  it('given a refused claim, then the node is a follower of the holder', () => {
    expect(afterClaim({ kind: 'refused', holder: 'a', term: 7, expires_at: 1, remaining_ms: 1 }, 0, TTL)).toEqual({ role: 'follower', holder: 'a', term: 7 });
    expect(stillLeading({ role: 'follower', holder: 'a', term: 7 }, 0)).toBe(false);
  });

  it('renews three times per ttl', () => {
    expect(renewEveryMs(6000)).toBe(2000);
  });

  it('given a refusal, then the follower claims again as the holder lease runs out when that is sooner than a renewal period; else, and after a grant or a failure, a renewal period later', () => {
    const refused = (remaining_ms: number): ClaimDecision => ({ kind: 'refused', holder: 'a', term: 1, expires_at: 0, remaining_ms });
    expect(nextClaimInMs(refused(5000), 6000)).toBe(2000);
    expect(nextClaimInMs(refused(1234.5), 6000)).toBe(1235);
    expect(nextClaimInMs(refused(0.2), 6000)).toBe(1);
    expect(nextClaimInMs({ kind: 'renew', term: 1, expires_at: 0 }, 6000)).toBe(2000);
    expect(nextClaimInMs(null, 6000)).toBe(2000);
  });
});
