import { Logger } from '@nestjs/common';
import { BehaviorSubject, Observable, distinctUntilChanged } from 'rxjs';
import { ClaimDecision, LeaseState, afterClaim, nextClaimInMs, stillLeading } from './lease.rules';
import { LeaseStore, SupervisorLease } from './supervisor-lease.port';

/** Runs fn after ms; answers a cancel. Injected so specs run the keeper in virtual time. */
export type Schedule = (ms: number, fn: () => void) => () => void;

export const realSchedule: Schedule = (ms, fn) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

const sameState = (a: LeaseState, b: LeaseState) => a.role === b.role && a.term === b.term;

/**
 * Keeps claiming a lease in a LeaseStore: renews it every ttl/3 while held, tries to take it as often while another
 * holds it, and as the other's lease runs out if that is sooner. The holder counts its lease from when it sent the claim, and turns follower the moment that runs out
 * without a renewal (a failed or slow claim, a process stopped and continued), before it asks the store again.
 */
export class LeaseKeeper implements SupervisorLease {
  private current: LeaseState = { role: 'follower', holder: null, term: 0 };
  private readonly subject = new BehaviorSubject<LeaseState>(this.current);
  readonly changes$: Observable<LeaseState> = this.subject.pipe(distinctUntilChanged(sameState));
  private cancelTick: () => void = () => undefined;
  private cancelExpiry: () => void = () => undefined;
  private stopped = false;
  private readonly logger = new Logger('lease');

  constructor(
    private readonly store: LeaseStore,
    private readonly name: string,
    readonly holder: string,
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly schedule: Schedule = realSchedule,
  ) {}

  state(): LeaseState {
    this.lapseIfExpired();
    return this.current;
  }

  async start(): Promise<void> {
    await this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTick();
    this.cancelExpiry();
    const wasLeader = this.current.role === 'leader';
    this.set({ role: 'follower', holder: null, term: this.current.term });
    if (wasLeader) await this.store.release(this.name, this.holder).catch((e: Error) => this.logger.warn(`releasing the ${this.name} lease failed: ${e.message}`));
    await this.store.close();
  }

  private lapseIfExpired(): void {
    if (this.current.role === 'leader' && !stillLeading(this.current, this.now())) {
      this.logger.warn(`the ${this.name} lease (term ${this.current.term}) ran out without a renewal: no longer leader`);
      this.set({ role: 'follower', holder: null, term: this.current.term });
    }
  }

  private async tick(): Promise<void> {
    this.lapseIfExpired();
    const sentAt = this.now();
    let decision: ClaimDecision | null = null;
    try {
      decision = await this.store.claim(this.name, this.holder, this.ttlMs);
      if (this.stopped) return;
      const next = afterClaim(decision, sentAt, this.ttlMs);
      // Answered after its own expiry (the process stalled meanwhile): the store may have moved on, so it is not held.
      this.set(stillLeading(next, this.now()) || next.role === 'follower' ? next : { role: 'follower', holder: null, term: next.term });
    } catch (e) {
      this.logger.warn(`claiming the ${this.name} lease failed: ${(e as Error).message}`);
      this.lapseIfExpired();
    }
    if (this.stopped) return;
    this.cancelTick = this.schedule(nextClaimInMs(decision, this.ttlMs), () => void this.tick());
  }

  private set(next: LeaseState): void {
    this.current = next;
    this.cancelExpiry();
    if (next.role === 'leader') this.cancelExpiry = this.schedule(Math.max(0, next.until - this.now()), () => this.lapseIfExpired());
    this.subject.next(next);
  }
}
