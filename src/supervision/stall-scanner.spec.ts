import { SerialQueue } from '../common/serial-queue';
import { SessionView } from './session-directory.port';
import { StallScanner } from './stall-scanner';
import { WatchdogConfig } from './stall-watchdog';
import { SupervisionCommand, SupervisionState, decide, evolve, initialSupervisionState, isOn } from './supervision.decider';
import { WakeReason } from './supervision.machine';

const S = 1000;
const T0 = Date.parse('2026-11-26T09:00:00.000Z');
const config: WatchdogConfig = { stall_watchdog_interval_s: 90, stall_threshold_s: 900, stall_cooldown_s: 1800, stall_watchdog_startup_delay_s: 45 };

const session = (over: Partial<SessionView>): SessionView => ({
  id: 'cs_1',
  alias: 'w1',
  state: 'pending_decision',
  state_since: T0,
  excluded: false,
  active: true,
  recoverable: true,
  last_result: null,
  waiting_on: null,
  attention_since: over.state_since ?? T0,
  ...over,
});

/** The scanner over supervision's real rules: a stall it records is decided and folded into the state, whose cooldowns the next scan reads. */
function harness(sessions: SessionView[], opts: { leading?: boolean; failRecord?: boolean } = {}) {
  let state: SupervisionState = initialSupervisionState();
  const apply = (cmd: SupervisionCommand) => {
    const d = decide(cmd, state);
    if (d.error) throw new Error(d.error.message);
    for (const e of d.events) state = evolve(state, { ...e, at: Date.now(), seq: 0 });
  };
  apply({ type: 'enable', started_by: 'user' });
  const woken: WakeReason[] = [];
  const errors: string[] = [];
  const scanner = new StallScanner(
    { config, sessions: { list: () => sessions }, queue: new SerialQueue(), now: Date.now, log: { log: () => undefined, warn: () => undefined, error: (m) => errors.push(m) } },
    {
      watching: () => (opts.leading ?? true) && isOn(state),
      cooldowns: () => state.cooldowns,
      record: async ({ session_id, kind, stalled_for_s, cooldown_until }) => {
        if (opts.failRecord) throw new Error('the journal is closed');
        apply({ type: 'detect_stall', session_id, kind, stalled_for_s, cooldown_until });
      },
      wake: (r) => woken.push(r),
    },
  );
  return { scanner, woken, errors, cooldowns: () => state.cooldowns };
}

describe('stall scanner (virtual time)', () => {
  beforeEach(() => jest.useFakeTimers({ now: T0 }));
  afterEach(() => jest.useRealTimers());

  it('given a supervised session waiting past the threshold, when the ticks come, then it is journaled and wakes the brain once, then cools down', async () => {
    const h = harness([session({}), session({ id: 'cs_2', alias: 'w2', excluded: true })]);
    h.scanner.start();
    jest.setSystemTime(T0 + 900 * S - 45 * S);
    // The first scan runs after the startup delay: the session has waited 900 s then.
    await jest.advanceTimersByTimeAsync(45 * S - 1);
    expect(h.woken).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.woken).toEqual([{ session_id: 'cs_1', alias: 'w1', trigger: 'stall', state: 'pending_decision', message: 'waiting 900s in pending_decision' }]);
    expect(h.cooldowns().get('cs_1:pending_decision')).toBe(T0 + 900 * S + 1800 * S);
    // Every interval it scans again: the cooldown holds for 1,800 s, then the stall fires again.
    await jest.advanceTimersByTimeAsync(1800 * S - 1);
    expect(h.woken).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(90 * S);
    expect(h.woken).toHaveLength(2);
    h.scanner.stop();
  });

  it('given a node that does not lead, then a scan records nothing and wakes no one', async () => {
    const h = harness([session({ state_since: T0 - 3600 * S })], { leading: false });
    expect(await h.scanner.scan()).toEqual([]);
    expect(h.woken).toEqual([]);
  });

  it('given a stall that cannot be journaled, then it is logged, wakes no one, and the next scan finds it again', async () => {
    const h = harness([session({ state_since: T0 - 3600 * S })], { failRecord: true });
    expect(await h.scanner.scan()).toEqual([]);
    expect(await h.scanner.scan()).toEqual([]);
    expect(h.woken).toEqual([]);
    expect(h.errors).toEqual([
      'stall watchdog: w1 (cs_1) has waited 3600s in pending_decision, but recording the stall failed: the journal is closed',
      'stall watchdog: w1 (cs_1) has waited 3600s in pending_decision, but recording the stall failed: the journal is closed',
    ]);
  });
});
