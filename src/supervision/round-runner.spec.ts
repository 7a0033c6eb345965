import { DomainError } from '../common/domain-error';
import { CommandStream, handleCommand } from '../journal/command-handler';
import { EventJournal } from '../journal/event-journal';
import { MemoryStorage } from '../journal/memory.storage';
import { RoundDriver } from './round-driver.port';
import { READY_WAIT_MS, RoundCommands, RoundRunner } from './round-runner';
import { RoundView } from './round.view';
import { SupervisionCommand, SupervisionState, decide, evolveStored, initialSupervisionState } from './supervision.decider';
import { ROUND_OUTCOME, RoundEndType } from './supervision.events';
import { WakeReason, wakeReason } from './supervision.machine';

const DEBOUNCE_MS = 100;
const TIMEOUT_MS = 60_000;

const reason = (session_id: string, trigger = 'ask_human'): WakeReason => wakeReason({ session_id, alias: session_id.replace('cs_', 'w'), trigger, state: null, message: null });

/** Delivery that lasts until the round ends otherwise, as a brain working on it does. */
const untilAborted = (signal: AbortSignal) => new Promise<null>((resolve) => signal.addEventListener('abort', () => resolve(null)));

/** A driver that records each delivery and the reason its signal was aborted with; `answer` says how it ends. */
function recordingDriver(answer: (signal: AbortSignal) => Promise<{ summary: string } | null> = untilAborted) {
  const delivered: Array<{ round: RoundView; aborted: () => unknown }> = [];
  const driver: RoundDriver = {
    name: 'recording',
    deliver: (round, signal) => {
      delivered.push({ round, aborted: () => (signal.aborted ? signal.reason : null) });
      return answer(signal);
    },
  };
  return { driver, delivered };
}

/**
 * The runner over supervision's real rules: its commands are decided on the command path against an in-memory journal,
 * and each round end folded is told to the runner, as the service does.
 */
async function harness(driver: RoundDriver, afterStart: (round: RoundView, run: (cmd: SupervisionCommand) => Promise<void>) => Promise<void> = async () => undefined) {
  const journal = await EventJournal.open(new MemoryStorage());
  let state: SupervisionState = initialSupervisionState();
  let version = 0;
  const stream: CommandStream<SupervisionState> = {
    name: 'supervision',
    current: () => ({ state, version }),
    adopt: (s, v) => {
      state = s;
      version = v;
    },
  };
  const errors: string[] = [];
  const warnings: string[] = [];
  let n = 0;
  let runner: RoundRunner;
  const run = async (cmd: SupervisionCommand) => {
    const { stored } = await handleCommand(journal, stream, (s) => decide(cmd, s), evolveStored);
    for (const e of stored) if (Object.hasOwn(ROUND_OUTCOME, e.type)) runner.ended((e.data as { round_id: string }).round_id, ROUND_OUTCOME[e.type as RoundEndType]);
  };
  const commands: RoundCommands = {
    start: async (reasons) => {
      const at = Date.now();
      const id = `rd_${++n}`;
      try {
        await run({ type: 'start_round', round: { id, started_at: at, deadline_at: at + TIMEOUT_MS, reasons } });
      } catch (e) {
        if (e instanceof DomainError && e.code === 'supervision_off') return null;
        throw e;
      }
      const round = state.rounds.get(id)?.view ?? null;
      if (round) await afterStart(round, run);
      return round;
    },
    complete: (id, summary) => run({ type: 'complete_round', round_id: id, summary }),
    fail: (id, why) => run({ type: 'fail_round', round_id: id, reason: why }),
    timeOut: (id) => run({ type: 'time_out_round', round_id: id }),
    status: (id) => state.rounds.get(id)?.view.status ?? null,
  };
  runner = new RoundRunner(commands, () => driver, { debounce_ms: DEBOUNCE_MS, now: Date.now }, { log: () => undefined, warn: (m) => warnings.push(m), error: (m) => errors.push(m) });
  await run({ type: 'enable', started_by: 'user' });
  runner.start();
  const rounds = () => [...state.rounds.values()].map((r) => r.view);
  return { runner, run, rounds, journal, errors, warnings };
}

describe('round runner (virtual time)', () => {
  const T0 = Date.parse('2026-11-26T09:00:00.000Z');
  beforeEach(() => jest.useFakeTimers({ now: T0 }));
  afterEach(() => jest.useRealTimers());

  it('given a burst of triggers inside the debounce, when the window closes, then one round carries them all and goes to the driver', async () => {
    const { driver, delivered } = recordingDriver();
    const h = await harness(driver);
    h.runner.trigger(reason('cs_1'));
    await jest.advanceTimersByTimeAsync(50);
    h.runner.trigger(reason('cs_2'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS - 1);
    expect(h.rounds()).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.rounds().map((r) => [r.status, r.reasons.map((x) => x.session_id)])).toEqual([['in_flight', ['cs_1', 'cs_2']]]);
    expect(delivered.map((d) => d.round.id)).toEqual([h.rounds()[0].id]);
    expect(delivered[0].round.prompt).toContain('w2 (cs_2) asked the human a question');
    h.runner.stop();
  });

  it('given a driver not ready (its brain finishing a turn), then the round starts once it is, and at most READY_WAIT_MS later', async () => {
    // Given a driver whose brain is busy until told
    let idle: () => void = () => undefined;
    const { driver, delivered } = recordingDriver();
    const busy: RoundDriver = { ...driver, ready: () => new Promise<void>((resolve) => (idle = resolve)) };
    const h = await harness(busy);
    // When a trigger's window closes, Then no round starts while the brain is busy
    h.runner.trigger(reason('cs_1'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS + 1_000);
    expect(h.rounds()).toEqual([]);
    // When it is ready, Then the round starts then, and is delivered
    idle();
    await jest.advanceTimersByTimeAsync(0);
    expect(h.rounds().map((r) => [r.status, Date.parse(r.started_at) - T0])).toEqual([['in_flight', DEBOUNCE_MS + 1_000]]);
    expect(delivered).toHaveLength(1);
    h.runner.stop();
    // And a brain that never gets ready holds a round back READY_WAIT_MS, not longer
    const never = await harness({ ...recordingDriver().driver, ready: () => new Promise<void>(() => undefined) });
    const from = Date.now();
    never.runner.trigger(reason('cs_2'), true);
    await jest.advanceTimersByTimeAsync(READY_WAIT_MS - 1);
    expect(never.rounds()).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(never.rounds().map((r) => Date.parse(r.started_at) - from)).toEqual([READY_WAIT_MS]);
    never.runner.stop();
  });

  it('given the brain parked at its limit during a round, then that round fails, no round starts before the reset, and the first after it carries its reasons and all that came meanwhile', async () => {
    // Given a brain whose turn the limit refuses: parked for an hour from then, its round refused
    const RESET_MS = 3_600_000;
    let until: number | null = null;
    const { driver, delivered } = recordingDriver(async (signal) => {
      if (delivered.length > 1) return untilAborted(signal);
      until = Date.now() + RESET_MS;
      throw new Error("its model's usage limit refused the turn");
    });
    const h = await harness({ ...driver, pausedUntil: () => (until !== null && until > Date.now() ? until : null) });
    h.runner.trigger(reason('cs_1'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    expect(h.rounds().map((r) => r.status)).toEqual(['failed']);
    // When triggers come in during the limit, one of them the same as the refused round's (the latest wins)
    h.runner.trigger(reason('cs_2'));
    await jest.advanceTimersByTimeAsync(RESET_MS / 2);
    h.runner.trigger(reason('cs_3', 'pending_handling'));
    h.runner.trigger(reason('cs_1'));
    await jest.advanceTimersByTimeAsync(RESET_MS / 2 - 1);
    // Then no round starts before the reset
    expect(h.rounds()).toHaveLength(1);
    // And the first round after it carries every reason, each once
    await jest.advanceTimersByTimeAsync(10);
    const after = h.rounds().slice(1);
    expect(after.map((r) => [r.status, r.reasons.map((x) => x.session_id).sort()])).toEqual([['in_flight', ['cs_1', 'cs_2', 'cs_3']]]);
    // At the reset, give or take the scheduler's tick that kicks the next round
    expect(Date.parse(after[0].started_at) - T0 - DEBOUNCE_MS - RESET_MS).toBeGreaterThanOrEqual(0);
    expect(delivered).toHaveLength(2);
    h.runner.stop();
  });

  it('given an immediate trigger, then its round starts without waiting for the window', async () => {
    const h = await harness(recordingDriver().driver);
    h.runner.trigger(reason('-', 'initial'), true);
    await jest.advanceTimersByTimeAsync(0);
    expect(h.rounds()).toHaveLength(1);
    h.runner.stop();
  });

  it('given a round nobody ends, when its deadline passes, then it times out then and not a millisecond before, and its delivery is aborted so', async () => {
    const { driver, delivered } = recordingDriver();
    const h = await harness(driver);
    h.runner.trigger(reason('cs_1'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    await jest.advanceTimersByTimeAsync(TIMEOUT_MS - 1);
    expect(h.rounds()[0].status).toBe('in_flight');
    await jest.advanceTimersByTimeAsync(1);
    expect(h.rounds()[0]).toMatchObject({ status: 'timed_out', ended_at: new Date(T0 + DEBOUNCE_MS + TIMEOUT_MS).toISOString() });
    expect(delivered[0].aborted()).toBe('timed_out');
    h.runner.stop();
  });

  it('given triggers during a round, when the brain completes it, then exactly one follow-up round carries them, and the first delivery is aborted as completed', async () => {
    const { driver, delivered } = recordingDriver();
    const h = await harness(driver);
    h.runner.trigger(reason('cs_1'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    const [first] = h.rounds();
    h.runner.trigger(reason('cs_2'));
    h.runner.trigger(reason('cs_3'));
    // Longer than the window: the flush during the round starts nothing, and loses nothing.
    await jest.advanceTimersByTimeAsync(5 * DEBOUNCE_MS);
    expect(h.rounds()).toHaveLength(1);
    await h.run({ type: 'complete_round', round_id: first.id, summary: 'dispatched' });
    await jest.advanceTimersByTimeAsync(0);
    expect(h.rounds().map((r) => [r.status, r.reasons.map((x) => x.session_id)])).toEqual([
      ['completed', ['cs_1']],
      ['in_flight', ['cs_2', 'cs_3']],
    ]);
    expect(delivered[0].aborted()).toBe('completed');
    // The first round's deadline was disarmed with it: only the second one times out.
    await jest.advanceTimersByTimeAsync(TIMEOUT_MS);
    expect(h.rounds().map((r) => r.status)).toEqual(['completed', 'timed_out']);
    h.runner.stop();
  });

  it('given a driver that ends the round itself, then the round is completed with its summary, and its deadline is disarmed', async () => {
    const h = await harness(recordingDriver(async () => ({ summary: 'handled by the command brain' })).driver);
    h.runner.trigger(reason('cs_1'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    expect(h.rounds()[0]).toMatchObject({ status: 'completed', summary: 'handled by the command brain' });
    await jest.advanceTimersByTimeAsync(TIMEOUT_MS);
    expect((await h.journal.readStream('supervision')).map((e) => e.type)).toEqual(['supervision.enabled', 'round.started', 'round.completed']);
    h.runner.stop();
  });

  it('given a driver whose delivery fails, then the round ends failed with why, logged as a warning', async () => {
    const h = await harness(recordingDriver(() => Promise.reject(new Error('the brain process exited mid-turn'))).driver);
    h.runner.trigger(reason('cs_1'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    const failure = 'delivery to the main brain failed (recording): the brain process exited mid-turn';
    expect(h.rounds()[0]).toMatchObject({ status: 'failed', failure });
    expect(h.warnings).toEqual([`round ${h.rounds()[0].id}: ${failure}`]);
    expect(h.errors).toEqual([]);
  });

  it('given a round in flight and triggers pending, when the runner stops, then nothing more starts or times out, the delivery is aborted as interrupted, and the journal keeps the round in flight', async () => {
    const { driver, delivered } = recordingDriver();
    const h = await harness(driver);
    h.runner.trigger(reason('cs_1'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    h.runner.trigger(reason('cs_2'));
    h.runner.stop();
    await jest.advanceTimersByTimeAsync(2 * TIMEOUT_MS);
    expect(delivered[0].aborted()).toBe('interrupted');
    expect(h.rounds().map((r) => r.status)).toEqual(['in_flight']);
    // Triggers while stopped are dropped.
    h.runner.trigger(reason('cs_3'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    expect(h.rounds()).toHaveLength(1);
  });

  it('given a round that ended before it could be handed over, then it is not delivered', async () => {
    const { driver, delivered } = recordingDriver();
    // The round ends as soon as it has started (another node's complete_round folded first).
    const h = await harness(driver, (round, run) => run({ type: 'complete_round', round_id: round.id }));
    h.runner.trigger(reason('cs_1'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    expect(h.rounds().map((r) => r.status)).toEqual(['completed']);
    expect(delivered).toEqual([]);
    h.runner.stop();
  });

  it('given a round kept in flight at a takeover, when the runner starts adopting it, then it is not delivered again, holds the next round back until it ends, and times out at its own deadline', async () => {
    const { driver, delivered } = recordingDriver();
    const h = await harness(driver);
    h.runner.trigger(reason('cs_1'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    const [kept] = h.rounds();
    // The node that ran it lost the lease: this runner stops, and the next one (the new leader's) adopts the round.
    h.runner.stop();
    await jest.advanceTimersByTimeAsync(TIMEOUT_MS / 2);
    h.runner.start(kept);
    h.runner.trigger(reason('cs_2'));
    await jest.advanceTimersByTimeAsync(5 * DEBOUNCE_MS);
    expect(h.rounds().map((r) => r.status)).toEqual(['in_flight']);
    expect(delivered.map((d) => d.round.id)).toEqual([kept.id]);
    const deadline = T0 + DEBOUNCE_MS + TIMEOUT_MS;
    await jest.advanceTimersByTimeAsync(deadline - Date.now() - 1);
    expect(h.rounds().map((r) => r.status)).toEqual(['in_flight']);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.rounds()[0]).toMatchObject({ status: 'timed_out', ended_at: new Date(deadline).toISOString() });
    // The kick for the triggers held back runs on the scheduler's next tick.
    await jest.advanceTimersByTimeAsync(1);
    expect(h.rounds().map((r) => [r.status, r.reasons.map((x) => x.session_id)])).toEqual([
      ['timed_out', ['cs_1']],
      ['in_flight', ['cs_2']],
    ]);
    h.runner.stop();
  });

  it('given a kept round that ended before the runner started, then adopting it holds nothing back', async () => {
    const h = await harness(recordingDriver().driver);
    h.runner.trigger(reason('cs_1'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    const [kept] = h.rounds();
    h.runner.stop();
    await h.run({ type: 'complete_round', round_id: kept.id });
    h.runner.start(kept);
    h.runner.trigger(reason('cs_2'));
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    expect(h.rounds().map((r) => r.status)).toEqual(['completed', 'in_flight']);
    h.runner.stop();
  });
});
