import { map, takeUntil, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { WatchdogConfig, WatchedSession, cooldownKey, dropExpiredCooldowns, scanForStalls, watchdogTicks } from './stall-watchdog';

const cfg: WatchdogConfig = {
  stall_watchdog_interval_s: 90,
  stall_threshold_s: 900,
  stall_cooldown_s: 1800,
  stall_watchdog_startup_delay_s: 45,
};
const S = 1000;

const session = (over: Partial<WatchedSession>): WatchedSession => ({
  id: 'cs_a',
  alias: 'w1',
  state: 'pending_decision',
  state_since: 0,
  supervised: true,
  ...over,
});

describe('stall watchdog', () => {
  describe('scan', () => {
    it('fires for a supervised session past the threshold in a state needing handling', () => {
      expect(scanForStalls(900 * S, [session({})], new Map(), cfg)).toEqual([
        { session_id: 'cs_a', alias: 'w1', kind: 'pending_decision', stalled_for_s: 900, cooldown_until: 2700 * S },
      ]);
    });

    it('does not fire before the threshold, for working sessions, or for excluded sessions', () => {
      expect(scanForStalls(899 * S, [session({})], new Map(), cfg)).toEqual([]);
      expect(scanForStalls(5000 * S, [session({ state: 'working' }), session({ state: 'exited' })], new Map(), cfg)).toEqual([]);
      expect(scanForStalls(5000 * S, [session({ supervised: false })], new Map(), cfg)).toEqual([]);
    });

    it('given cooldowns, when one has run out, then it is dropped and the one still running is kept', () => {
      const cooldowns = new Map([
        [cooldownKey('cs_a', 'pending_decision'), 2700 * S],
        [cooldownKey('cs_b', 'pending_handling'), 2701 * S],
      ]);
      dropExpiredCooldowns(cooldowns, 2700 * S);
      expect([...cooldowns.keys()]).toEqual([cooldownKey('cs_b', 'pending_handling')]);
      // What scanForStalls would have let fire anyway: a cooldown ending at `now` no longer holds.
      expect(scanForStalls(2700 * S, [session({})], new Map(), cfg)).toHaveLength(1);
    });

    it('waits out the cooldown per (session, kind), and another kind is not held back', () => {
      const cooldowns = new Map([[cooldownKey('cs_a', 'pending_decision'), 2700 * S]]);
      expect(scanForStalls(2699 * S, [session({})], cooldowns, cfg)).toEqual([]);
      expect(scanForStalls(2700 * S, [session({})], cooldowns, cfg)).toHaveLength(1);
      expect(scanForStalls(2000 * S, [session({ state: 'pending_authorization' })], cooldowns, cfg)).toHaveLength(1);
      expect(scanForStalls(2000 * S, [session({ id: 'cs_b' })], cooldowns, cfg)).toHaveLength(1);
    });
  });

  describe('ticks (virtual time)', () => {
    const scheduler = () => new TestScheduler((a, e) => expect(a).toEqual(e));

    it('scans first after the startup delay, then every interval', () => {
      const ts = scheduler();
      ts.run(({ expectObservable }) => {
        const ticks = watchdogTicks(cfg, ts).pipe(map(() => 't'));
        expectObservable(ticks, '^ 300s !').toBe('45s t 89999ms t 89999ms t');
      });
    });

    it.each([0, -5])('is disabled when the interval is %i', (interval) => {
      const ts = scheduler();
      ts.run(({ expectObservable }) => {
        expectObservable(watchdogTicks({ ...cfg, stall_watchdog_interval_s: interval }, ts)).toBe('|');
      });
    });

    it('given a session stalling after boot, fires once at the first scan past the threshold, then not again within the cooldown', () => {
      const ts = scheduler();
      ts.run(({ flush }) => {
        const fired: number[] = [];
        const cooldowns = new Map<string, number>();
        const s = session({ state_since: 100 * S });
        watchdogTicks(cfg, ts).pipe(takeUntil(timer(4000 * S, ts))).subscribe(() => {
          for (const stall of scanForStalls(ts.now(), [s], cooldowns, cfg)) {
            fired.push(ts.now() / S);
            cooldowns.set(cooldownKey(stall.session_id, stall.kind), stall.cooldown_until);
          }
        });
        flush();
        // Scans at 45, 135, …: the first at or past 100 + 900 = 1000 s is 1035 s; then cooldown to 2835 s, next scan 2835 s.
        expect(fired.slice(0, 2)).toEqual([1035, 2835]);
      });
    });
  });
});
