import { SupervisionJournalEvent, SupervisionState, evolve, initialSupervisionState } from './supervision.decider';
import { WakeReason } from './supervision.machine';
import { StoredSupervision, restoreSupervision, storeSupervision } from './supervision.snapshot';

const T0 = Date.parse('2026-11-26T09:00:00.000Z');
const reason: WakeReason = { alias: 'w1', message: 'no creds', session_id: 'cs_1', state: 'blocked', trigger: 'notify_blocked' };

function given(...events: SupervisionJournalEvent[]): SupervisionState {
  return events.reduce((s, e, i) => evolve(s, { ...e, at: T0 + i * 1000, seq: i + 1 }), initialSupervisionState());
}

const history: SupervisionJournalEvent[] = [
  { type: 'supervision.scope_set', data: { mode: 'except' } },
  { type: 'supervision.enabled', data: { started_by: 'user', task_hint: 'ship' } },
  { type: 'round.started', data: { round: { id: 'rd_1', started_at: T0 + 2000, deadline_at: T0 + 62_000, reasons: [reason] } } },
  { type: 'round.completed', data: { round_id: 'rd_1', summary: 'done' } },
  { type: 'supervision.stall_detected', data: { session_id: 'cs_1', kind: 'pending_decision', stalled_for_s: 900, cooldown_until: T0 + 600_000 } },
  { type: 'supervision.loop_woken', data: { session_id: 'cs_1', pattern: 'repeated_call', signature: 'abc', wakes: 1 } },
];

describe('supervision snapshot', () => {
  it('Given a state with rounds, cooldowns and loop wake-ups, When it is stored and restored, Then the same state comes back', () => {
    const s = given(...history);
    const back = restoreSupervision(JSON.parse(JSON.stringify(storeSupervision(s, T0 + 5000))) as StoredSupervision, T0 + 5000, Infinity);
    expect({ ...back, machine: null }).toEqual({ ...s, machine: null });
    expect({ value: back.machine.value, context: back.machine.context }).toEqual({ value: s.machine.value, context: s.machine.context });
  });

  it('Given a state, When it is stored, Then it has the shape snapshots on disk already have', () => {
    const stored = storeSupervision(given(...history), T0 + 5000);
    expect(Object.keys(stored).sort()).toEqual(['context', 'cooldowns', 'covered', 'last_event_at', 'loop_wakes', 'rounds', 'scope_mode', 'value']);
    expect(stored).toMatchObject({
      value: { on: 'idle' },
      cooldowns: [['cs_1:pending_decision', T0 + 600_000]],
      loop_wakes: [['cs_1:repeated_call', { signature: 'abc', wakes: 1, at: T0 + 5000 }]],
      last_event_at: T0 + 5000,
      scope_mode: 'except',
      covered: [['cs_1', { at: T0 + 2000, round_id: 'rd_1' }]],
      rounds: [{ seq: 3, round: { id: 'rd_1', status: 'completed', summary: 'done', failure: null, ended_at: new Date(T0 + 3000).toISOString() } }],
    });
  });

  it('Given a snapshot written before rounds could fail, before the scope mode, coverage and loops were kept, When it is restored, Then failure reads null, the scope all, nothing covered and no loop woke anyone', () => {
    const stored = JSON.parse(JSON.stringify(storeSupervision(given(...history.slice(1, 4)), T0 + 5000))) as StoredSupervision;
    delete stored.scope_mode;
    delete stored.covered;
    delete stored.loop_wakes;
    for (const r of stored.rounds) delete r.round.failure;
    const back = restoreSupervision(stored, T0 + 5000, Infinity);
    expect(back.scope_mode).toBe('all');
    // Nor what rounds covered: every session waiting shows as pending until a round names it.
    expect(back.covered.size).toBe(0);
    expect(back.loop_wakes.size).toBe(0);
    expect(back.rounds.get('rd_1')?.view).toMatchObject({ status: 'completed', failure: null });
  });

  it('Given a snapshot with rounds past their retention, cooldowns run out and loop wake-ups as old by the restart, When it is restored, Then they are left out', () => {
    const stored = storeSupervision(given(...history), T0 + 5000);
    const back = restoreSupervision(stored, T0 + 600_000, 60_000);
    expect([...back.rounds.keys()]).toEqual([]);
    expect(back.covered.size).toBe(0);
    expect(back.cooldowns.size).toBe(0);
    expect(back.loop_wakes.size).toBe(0);
    // Stored with cooldowns already run out: those are not written.
    expect(storeSupervision(given(...history), T0 + 600_000).cooldowns).toEqual([]);
  });
});
