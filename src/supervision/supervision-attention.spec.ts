import { BehaviorSubject } from 'rxjs';
import { EventBus } from '../bus/event-bus';
import { LeaseState } from '../cluster/lease.rules';
import { soleNode } from '../cluster/node-directory.port';
import { SupervisorLease } from '../cluster/supervisor-lease.port';
import { EventJournal } from '../journal/event-journal';
import { MemoryStorage } from '../journal/memory.storage';
import { CapturedLogger } from '../../test/support/captured-logger';
import { MemorySessionDirectory } from '../../test/support/memory-session-directory';
import { RoundDriver } from './round-driver.port';
import { RoundView } from './round.view';
import { SupervisionService } from './supervision.service';

const DEBOUNCE_MS = 2000;
const T0 = Date.parse('2026-11-26T09:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** A lease the spec hands over: follower until `lead()`, as a node that takes over sees it. */
function handedLease(first: LeaseState) {
  const changes = new BehaviorSubject<LeaseState>(first);
  const lease: SupervisorLease = { holder: 'b', state: () => changes.value, changes$: changes.asObservable(), start: async () => undefined, stop: async () => undefined };
  return { lease, lead: (term: number) => changes.next({ role: 'leader', term, until: Infinity }) };
}

/** A driver that holds each round until it is completed, as a brain working on it does; and may fail them. */
function brain(fail = false): { driver: RoundDriver; delivered: RoundView[] } {
  const delivered: RoundView[] = [];
  const driver: RoundDriver = {
    name: 'recording',
    deliver: (round, signal) => {
      delivered.push(round);
      if (fail) return Promise.reject(new Error('the brain is unreachable'));
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(null)));
    },
  };
  return { driver, delivered };
}

/**
 * Supervision over an in-memory journal in virtual time (jest's clock drives the debounce, Date.now and the journal),
 * with sessions already waiting when it turns on: w1 asks for a permission, w2 asked a question, w3 works, w4 is
 * excluded and waits.
 */
async function given(opts: { lease?: SupervisorLease; fail?: boolean } = {}) {
  const journal = await EventJournal.open(new MemoryStorage());
  const bus = new EventBus(journal);
  const sessions = new MemorySessionDirectory(journal);
  sessions.add('cs_1', { state: 'pending_authorization', state_since: T0 - 60_000, waiting_on: { kind: 'permission', text: 'Bash', request_id: 'req_1', input: { command: 'npm run migrate -- --force' } } });
  sessions.add('cs_2', { state: 'pending_decision', state_since: T0 - 30_000, waiting_on: { kind: 'question', text: 'Which DB?' } });
  sessions.add('cs_3');
  sessions.add('cs_4', { state: 'pending_handling', state_since: T0 - 10_000, excluded: true });
  const { driver, delivered } = brain(opts.fail);
  let n = 0;
  const boot = async (lease = opts.lease) => {
    const svc = new SupervisionService(bus, journal, sessions, { debounce_ms: DEBOUNCE_MS, restore_ttl_s: 900, round_timeout_s: 600 }, Date.now, () => String(++n), driver, lease ? { lease, nodes: soleNode('b') } : undefined);
    await svc.start();
    return svc;
  };
  const svc = await boot();
  return { journal, sessions, svc, delivered, boot };
}

const named = (r: RoundView) => r.reasons.map((x) => [x.alias, x.trigger, x.message, x.since ?? null]);
const W1 = ['w1', 'pending_authorization', 'Bash', iso(T0 - 60_000)];
const W2 = ['w2', 'ask_human', 'Which DB?', iso(T0 - 30_000)];

describe('attention as a state (virtual time)', () => {
  let logs: CapturedLogger;
  beforeEach(() => {
    jest.useFakeTimers({ now: T0 });
    logs = CapturedLogger.capture();
  });
  afterEach(() => {
    logs.release();
    jest.useRealTimers();
  });

  it('Given sessions already waiting, When supervision is switched on, Then within the debounce a round names each with why and since when, and until then they are pending', async () => {
    const { svc, delivered } = await given();
    await svc.setAutonomous({ enabled: true }, 'rest');
    expect(svc.status().autonomous?.pending).toEqual([
      { session_id: 'cs_1', alias: 'w1', state: 'pending_authorization', trigger: 'pending_authorization', since: iso(T0 - 60_000) },
      { session_id: 'cs_2', alias: 'w2', state: 'pending_decision', trigger: 'ask_human', since: iso(T0 - 30_000) },
    ]);
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS - 1);
    expect(svc.listRounds()).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    const [round] = svc.listRounds();
    expect(Date.parse(round.started_at) - T0).toBe(DEBOUNCE_MS);
    expect(named(round)).toEqual([W1, W2]);
    expect(round.prompt).toContain('  w1 (cs_1) pending_authorization since 08:59:00, waits on a permission');
    expect(round.prompt).toContain('  - w1 (cs_1) waits for a permission decision (待授权)\n');
    expect(delivered.map((r) => r.id)).toEqual([round.id]);
    // Covered by the round: nothing is pending any more.
    expect(svc.status().autonomous?.pending).toEqual([]);
    svc.stop();
  });

  it('Given sessions waiting, When /supervise turns supervision on, Then its round starts at once and names them beside the goal', async () => {
    const { svc } = await given();
    await svc.supervise('ship it', 'user');
    await jest.advanceTimersByTimeAsync(0);
    const [round] = svc.listRounds();
    expect(Date.parse(round.started_at)).toBe(T0);
    expect(round.reasons.map((r) => r.alias)).toEqual(['w1', 'w2', '-']);
    expect(round.reasons[2]).toMatchObject({ trigger: 'initial', message: 'ship it' });
    svc.stop();
  });

  it('Given supervision on and a round covering the waiting sessions, When enable_supervision is called again, Then no round wakes for them again', async () => {
    const { svc } = await given();
    await svc.enable({}, 'user', 'test');
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    const [first] = svc.listRounds();
    await svc.completeRound(first.id, 'looked at them');
    await svc.enable({ task_hint: 'a new goal' }, 'user', 'main_brain');
    await jest.advanceTimersByTimeAsync(10 * DEBOUNCE_MS);
    expect(svc.listRounds()).toHaveLength(1);
    svc.stop();
  });

  it('Given a session covered by a round, When what it waits on changes without a change of state (a second turn result), Then it wakes a round and is pending until then', async () => {
    const { svc, sessions } = await given();
    sessions.add('cs_5', { state: 'pending_handling', state_since: T0 - 5_000, last_result: 'first result' });
    await svc.enable({}, 'user', 'test');
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    const [first] = svc.listRounds();
    expect(named(first)).toContainEqual(['w5', 'pending_handling', 'first result', iso(T0 - 5_000)]);
    await svc.completeRound(first.id, 'read it');
    await jest.advanceTimersByTimeAsync(1000);
    // The worker's turn ends again while it is 待处理 already: no state change, a new result.
    await sessions.emit('cs_5', 'session.turn_ended', { result: 'second result' });
    expect(svc.status().autonomous?.pending.map((p) => [p.alias, p.since])).toEqual([['w5', iso(T0 + DEBOUNCE_MS + 1000)]]);
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    const [second] = svc.listRounds();
    expect(named(second)).toEqual([['w5', 'pending_handling', 'second result', iso(T0 + DEBOUNCE_MS + 1000)]]);
    expect(svc.status().autonomous?.pending).toEqual([]);
    svc.stop();
  });

  it('Given a round whose delivery failed, Then the sessions it named count as unseen again: pending', async () => {
    const { svc } = await given({ fail: true });
    await svc.enable({}, 'user', 'test');
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    expect(svc.listRounds().map((r) => r.status)).toEqual(['failed']);
    expect(logs.messages('warn', 'supervision')).toEqual([`round ${svc.listRounds()[0].id}: delivery to the main brain failed (recording): the brain is unreachable`]);
    expect(svc.status().autonomous?.pending.map((p) => p.alias)).toEqual(['w1', 'w2']);
    svc.stop();
  });

  it('Given sessions a completed round covered, When the service restarts and restores supervision, Then they wake no round again; a new turn result does, alone', async () => {
    const { svc, sessions, boot } = await given();
    await svc.enable({}, 'user', 'test');
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    await svc.completeRound(svc.listRounds()[0].id, 'seen');
    svc.stop();
    await jest.advanceTimersByTimeAsync(60_000);
    const again = await boot();
    await jest.advanceTimersByTimeAsync(10 * DEBOUNCE_MS);
    expect(again.listRounds().map((r) => r.status)).toEqual(['completed']);
    expect(again.status().autonomous?.pending).toEqual([]);
    await sessions.emit('cs_3', 'session.turn_ended', { result: 'tests pass' });
    await sessions.emit('cs_3', 'session.state_changed', { from: 'working', to: 'pending_handling', cause: 'session.turn_ended' });
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    const [round] = again.listRounds();
    expect(round.reasons.map((r) => [r.alias, r.trigger, r.message])).toEqual([['w3', 'pending_handling', 'tests pass']]);
    again.stop();
  });

  it('Given sessions a completed round covered, When supervision is switched off and on again, Then they wake no round; one whose wait began since does', async () => {
    const { svc, sessions } = await given();
    await svc.enable({}, 'user', 'test');
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    await svc.completeRound(svc.listRounds()[0].id, 'seen');
    await svc.disable('disabled');
    // w1 asks for another permission while supervision is off: a new wait, which no round has seen.
    await jest.advanceTimersByTimeAsync(1000);
    const askedAt = Date.now();
    await sessions.emit('cs_1', 'session.permission_requested', { tool: 'Write' });
    await svc.enable({}, 'user', 'test');
    await jest.advanceTimersByTimeAsync(10 * DEBOUNCE_MS);
    const rounds = svc.listRounds();
    expect(rounds).toHaveLength(2);
    expect(named(rounds[0])).toEqual([['w1', 'pending_authorization', 'Write', iso(askedAt)]]);
    svc.stop();
  });

  it('Given sessions a completed round of the old leader covered, When this node takes the lease, Then they wake no round', async () => {
    const handed = handedLease({ role: 'follower', holder: 'a', term: 1 });
    const { svc, journal } = await given({ lease: handed.lease });
    const reasons = [W1, W2].map(([alias, trigger, message, since], i) => ({ session_id: `cs_${i + 1}`, alias, trigger, message, since, state: null }));
    const covering = { id: 'rd_a', started_at: Date.now(), deadline_at: Date.now() + 600_000, reasons, node: 'a', term: 1, driver: 'stream' };
    await journal.append(
      'supervision',
      [
        { type: 'supervision.enabled', data: { started_by: 'user' } },
        { type: 'round.started', data: { round: covering } },
        { type: 'round.completed', data: { round_id: 'rd_a' } },
      ],
      { expectedVersion: 'no_stream' },
    );
    await jest.advanceTimersByTimeAsync(0);
    handed.lead(2);
    await jest.advanceTimersByTimeAsync(10 * DEBOUNCE_MS);
    expect(svc.listRounds().map((r) => [r.id, r.status])).toEqual([['rd_a', 'completed']]);
    expect(svc.status().autonomous?.pending).toEqual([]);
    svc.stop();
  });

  it('Given what the user did between two rounds, Then the second round says it, noted live, and read from the journal after a restart', async () => {
    const { svc, sessions, journal, boot } = await given();
    await svc.enable({}, 'user', 'test');
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    const [first] = svc.listRounds();
    const decided = (request_id: string) => journal.append('session-cs_1', [{ type: 'session.permission_resolved', data: { request_id, decision: 'deny', reason: null }, meta: { actor: 'user' } }]);
    await decided('r1');
    await svc.completeRound(first.id, 'seen');
    await sessions.emit('cs_3', 'session.turn_ended', { result: 'one' });
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    const [second] = svc.listRounds();
    expect(second.prompt).toMatch(new RegExp(`Since round ${first.id} \\(what the user and Brainstem did; your own calls are not listed\\):\\n  - \\d\\d:\\d\\d:\\d\\d the user denied w1's request r1\\n\\n`));
    await svc.completeRound(second.id, 'seen');
    await decided('r2');
    svc.stop();
    const again = await boot();
    await sessions.emit('cs_3', 'session.turn_ended', { result: 'two' });
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    const [third] = again.listRounds();
    expect(third.prompt).toContain(`Since round ${second.id}`);
    expect(third.prompt).toContain("the user denied w1's request r2\n");
    expect(third.prompt).not.toContain("request r1\n");
    again.stop();
  });

  it('Given a trigger journaled while no node led (the leader was killed), When this node takes the lease, Then its first round names that session, within the debounce', async () => {
    const handed = handedLease({ role: 'follower', holder: 'a', term: 1 });
    const { svc, sessions, journal } = await given({ lease: handed.lease });
    // Supervision was turned on by the old leader (its event is in the journal this node follows).
    await journal.append('supervision', [{ type: 'supervision.enabled', data: { started_by: 'user' } }], { expectedVersion: 'no_stream' });
    await jest.advanceTimersByTimeAsync(0);
    expect(svc.isOn()).toBe(true);
    // The leader is gone: w3's turn ends, and no one leads to wake for it.
    await sessions.emit('cs_3', 'session.turn_ended', { result: 'tests pass' });
    await sessions.emit('cs_3', 'session.state_changed', { from: 'working', to: 'pending_handling', cause: 'session.turn_ended' });
    await jest.advanceTimersByTimeAsync(10 * DEBOUNCE_MS);
    expect(svc.listRounds()).toEqual([]);
    const tookAt = Date.now();
    handed.lead(2);
    await jest.advanceTimersByTimeAsync(DEBOUNCE_MS);
    expect(logs.messages('log', 'supervision')).toEqual(['supervising as the lease holder (term 2)']);
    const [round] = svc.listRounds();
    expect(Date.parse(round.started_at) - tookAt).toBeLessThanOrEqual(DEBOUNCE_MS);
    expect(named(round)).toEqual([W1, W2, ['w3', 'pending_handling', 'tests pass', iso(tookAt - 10 * DEBOUNCE_MS)]]);
    svc.stop();
  });

  it('Given a worker that signals every second (faster than the debounce), Then the sessions waiting still get their round, within three windows', async () => {
    const { svc, sessions } = await given();
    await svc.enable({}, 'user', 'test');
    const chatty = setInterval(() => void sessions.emit('cs_3', 'session.progress', { status: 'completed', message: 'another milestone' }), 1000);
    await jest.advanceTimersByTimeAsync(3 * DEBOUNCE_MS);
    clearInterval(chatty);
    const [round] = svc.listRounds();
    expect(Date.parse(round.started_at) - T0).toBeLessThanOrEqual(3 * DEBOUNCE_MS);
    expect(round.reasons.map((r) => r.alias)).toEqual(['w1', 'w2', 'w3']);
    svc.stop();
  });
});
