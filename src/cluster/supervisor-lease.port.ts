import { BehaviorSubject, Observable } from 'rxjs';
import { ClaimDecision, LeaseState } from './lease.rules';

/** The lease whose holder supervises and hosts the main brain; its term fences the holder's appends. */
export const SUPERVISOR_LEASE_NAME = 'supervisor';

/** One node's hold on the supervisor lease, as far as it knows. */
export interface SupervisorLease {
  /** The holder's name: this node's id. */
  readonly holder: string;
  /** The state now: a leader whose lease ran out by its own clock is a follower already. */
  state(): LeaseState;
  /** Every change of role or term, the current one first. */
  readonly changes$: Observable<LeaseState>;
  /** Claims once (resolves when the first answer is in), then keeps claiming. */
  start(): Promise<void>;
  /** Stops claiming and lets the lease go, so another node takes it at once. */
  stop(): Promise<void>;
}

export const SUPERVISOR_LEASE = Symbol('SUPERVISOR_LEASE');

/** Where leases are kept: claimed (acquired, renewed or refused) and released atomically, on the store's clock. */
export interface LeaseStore {
  claim(name: string, holder: string, ttlMs: number): Promise<ClaimDecision>;
  /** Ends the holder's lease now (keeping its term), if it still holds it. */
  release(name: string, holder: string): Promise<void>;
  close(): Promise<void>;
}

/** The lease of a node alone on its journal (the embedded one): held from the start, term 1, for ever. */
export function heldLease(holder: string): SupervisorLease {
  const state: LeaseState = { role: 'leader', term: 1, until: Infinity };
  return {
    holder,
    state: () => state,
    changes$: new BehaviorSubject<LeaseState>(state).asObservable(),
    start: async () => undefined,
    stop: async () => undefined,
  };
}
