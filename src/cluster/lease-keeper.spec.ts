import { ClaimDecision, LeaseRow, LeaseState, decideClaim } from './lease.rules';
import { LeaseKeeper, Schedule } from './lease-keeper';
import { LeaseStore } from './supervisor-lease.port';

/** Virtual time: timers run when the test advances the clock. */
class VirtualClock {
  t = 0;
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private next = 0;
  readonly now = () => this.t;
  readonly schedule: Schedule = (ms, fn) => {
    const id = this.next++;
    this.timers.push({ at: this.t + ms, fn, id });
    return () => (this.timers = this.timers.filter((x) => x.id !== id));
  };
  /** Moves time on, running each timer due on the way (and the claims it starts) in order. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.t = due.at;
      due.fn();
      await flush();
    }
    this.t = end;
  }
  /** Jumps time forward without running timers (a process stopped with SIGSTOP). */
  freeze(ms: number): void {
    this.t += ms;
  }
}

const flush = () => new Promise((r) => setImmediate(r));

/** One lease row shared by the keepers, decided by the pure rules on the shared clock; claims can be made to fail. */
class FakeStore implements LeaseStore {
  row: LeaseRow | null = null;
  down = false;
  /** Holders cut off from the database (a partition). */
  readonly cut = new Set<string>();
  constructor(private readonly clock: VirtualClock) {}
  async claim(_name: string, holder: string, ttlMs: number): Promise<ClaimDecision> {
    if (this.down || this.cut.has(holder)) throw new Error('database unreachable');
    const d = decideClaim(this.row, holder, this.clock.now(), ttlMs);
    if (d.kind !== 'refused') this.row = { holder, term: d.term, expires_at: d.expires_at };
    return d;
  }
  async release(_name: string, holder: string): Promise<void> {
    if (this.row?.holder === holder) this.row = { ...this.row, expires_at: this.clock.now() };
  }
  async close(): Promise<void> {}
}

const TTL = 6000;

describe('LeaseKeeper', () => {
  let clock: VirtualClock;
  let store: FakeStore;
  const keeper = (holder: string) => new LeaseKeeper(store, 'supervisor', holder, TTL, clock.now, clock.schedule);
  const roles = (k: LeaseKeeper) => {
    const seen: LeaseState[] = [];
    k.changes$.subscribe((s) => seen.push(s));
    return seen;
  };
  beforeEach(() => {
    clock = new VirtualClock();
    store = new FakeStore(clock);
  });

  it('given a free lease, when two nodes start, then the first leads with term 1 and the other follows it', async () => {
    const a = keeper('a');
    const b = keeper('b');
    await a.start();
    await b.start();
    expect(a.state()).toMatchObject({ role: 'leader', term: 1 });
    expect(b.state()).toEqual({ role: 'follower', holder: 'a', term: 1 });
  });

  it('given a leader renewing every ttl/3, when a minute passes, then it stays leader in the same term', async () => {
    const a = keeper('a');
    const b = keeper('b');
    await a.start();
    await b.start();
    await clock.advance(60_000);
    expect(a.state()).toMatchObject({ role: 'leader', term: 1 });
    expect(b.state()).toMatchObject({ role: 'follower', holder: 'a' });
  });

  it('given the leader stopped claiming (killed), when its lease expires, then the follower takes it with term 2 within ttl + ttl/3', async () => {
    const a = keeper('a');
    const b = keeper('b');
    await a.start();
    await b.start();
    await a.stop();
    store.row = { holder: 'a', term: 1, expires_at: TTL }; // killed, not stopped: nothing released
    await clock.advance(TTL + TTL / 3);
    expect(b.state()).toMatchObject({ role: 'leader', term: 2 });
  });

  it('given the leader killed between renewals, when its lease runs out, then the follower takes it right then, not up to a renewal period later', async () => {
    const a = keeper('a');
    const b = keeper('b');
    await a.start();
    await b.start();
    await a.stop();
    // Its last renewal was 500 ms in: the lease runs to TTL + 500, off the follower's claim period.
    store.row = { holder: 'a', term: 1, expires_at: TTL + 500 };
    await clock.advance(TTL + 499);
    expect(b.state()).toEqual({ role: 'follower', holder: 'a', term: 1 });
    await clock.advance(1);
    expect(b.state()).toMatchObject({ role: 'leader', term: 2 });
  });

  it('given renewals that fail, when the leader own lease time passes, then it turns follower at its expiry, before asking again', async () => {
    const a = keeper('a');
    const seen = roles(a);
    await a.start();
    store.down = true;
    await clock.advance(TTL - 1);
    expect(a.state().role).toBe('leader');
    await clock.advance(1);
    expect(a.state()).toEqual({ role: 'follower', holder: null, term: 1 });
    expect(seen.map((s) => s.role)).toEqual(['follower', 'leader', 'follower']);
  });

  it('given a leader cut off past its lease while another took over, when it is back, then it follows the new term and never led again', async () => {
    const a = keeper('a');
    const b = keeper('b');
    await a.start();
    await b.start();
    const seenA = roles(a);
    store.cut.add('a');
    await clock.advance(TTL + TTL / 3);
    expect(b.state()).toMatchObject({ role: 'leader', term: 2 });
    expect(a.state()).toEqual({ role: 'follower', holder: null, term: 1 });
    store.cut.delete('a');
    await clock.advance(TTL / 3);
    expect(a.state()).toEqual({ role: 'follower', holder: 'b', term: 2 });
    expect(seenA.map((s) => `${s.role}:${s.term}`)).toEqual(['leader:1', 'follower:1', 'follower:2']);
  });

  it('given a leader frozen past its lease (SIGSTOP), when it reads its state before any timer ran, then its own clock already makes it a follower', async () => {
    const a = keeper('a');
    await a.start();
    clock.freeze(TTL);
    expect(a.state()).toEqual({ role: 'follower', holder: null, term: 1 });
  });

  it('given a leader that stops gracefully, then the lease is released and the follower takes it at its next claim', async () => {
    const a = keeper('a');
    const b = keeper('b');
    await a.start();
    await b.start();
    await a.stop();
    await clock.advance(TTL / 3);
    expect(b.state()).toMatchObject({ role: 'leader', term: 2 });
  });
});
