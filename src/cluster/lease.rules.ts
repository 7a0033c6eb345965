/**
 * The supervisor lease's rules, pure: one row per lease name in the shared database, with its holder, a term that
 * grows by one at each change of holder, and an expiry. Times are epoch ms; who decides passes the time it trusts
 * (the database's clock for a claim, so nodes with skewed clocks agree on expiry; its own for the holder's view).
 */

export interface LeaseRow {
  holder: string;
  term: number;
  expires_at: number;
}

export type ClaimDecision =
  /** Free or expired: taken with the next term. */
  | { kind: 'acquire'; term: number; expires_at: number }
  /** Held by the claimant already and not expired: same term, later expiry. */
  | { kind: 'renew'; term: number; expires_at: number }
  /** Another holder whose lease runs: the claimant follows. `remaining_ms`: how long it still runs, by the store's clock. */
  | { kind: 'refused'; holder: string; term: number; expires_at: number; remaining_ms: number };

/** A claim of the lease by `claimant` at `now`: a lease still running is only ever renewed by its own holder. */
export function decideClaim(row: LeaseRow | null, claimant: string, now: number, ttlMs: number): ClaimDecision {
  const expires_at = now + ttlMs;
  if (row === null) return { kind: 'acquire', term: 1, expires_at };
  const running = now < row.expires_at;
  if (running && row.holder === claimant) return { kind: 'renew', term: row.term, expires_at };
  if (running) return { kind: 'refused', holder: row.holder, term: row.term, expires_at: row.expires_at, remaining_ms: row.expires_at - now };
  // An expired lease, this claimant's own included, starts a new term: whatever it did before may have been fenced off.
  return { kind: 'acquire', term: row.term + 1, expires_at };
}

/** What this node is for the lease, as it knows it. */
export type LeaseState = { role: 'leader'; term: number; until: number } | { role: 'follower'; holder: string | null; term: number };

/**
 * The holder's own view after a claim it sent at `sentAt` (its clock): held until sentAt + ttl, never later than the
 * database could make it, since the database took its time after the claim was sent. A refusal makes it a follower.
 */
export function afterClaim(decision: ClaimDecision, sentAt: number, ttlMs: number): LeaseState {
  if (decision.kind === 'refused') return { role: 'follower', holder: decision.holder, term: decision.term };
  return { role: 'leader', term: decision.term, until: sentAt + ttlMs };
}

/** The holder stops acting as leader at once when its own view says the lease has run out (a renewal failed or came late). */
export function stillLeading(state: LeaseState, now: number): boolean {
  return state.role === 'leader' && now < state.until;
}

/** How often the holder renews (and a follower tries to take a lapsed lease): three times per TTL. */
export const renewEveryMs = (ttlMs: number): number => Math.max(1, Math.floor(ttlMs / 3));

/**
 * When to claim next, after a claim answered `decision` (null: it failed): every ttl/3, and a follower sooner when
 * the holder's lease runs out before that, so a dead holder's lease is taken as it expires rather than up to a
 * renewal period later (what supervision waits at a failover).
 */
export function nextClaimInMs(decision: ClaimDecision | null, ttlMs: number): number {
  const every = renewEveryMs(ttlMs);
  return decision?.kind === 'refused' ? Math.max(1, Math.min(every, Math.ceil(decision.remaining_ms))) : every;
}
