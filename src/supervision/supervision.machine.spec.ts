import { initialTransition, transition } from 'xstate';
import { toMachineEvent } from './supervision.events';
import { RoundInFlight, SupervisionEvent, nextSupervision, supervisionMachine } from './supervision.machine';

type Snap = ReturnType<typeof initialTransition<typeof supervisionMachine>>[0];

const start = (): Snap => initialTransition(supervisionMachine)[0];
const apply = (snap: Snap, ...events: SupervisionEvent[]): Snap => events.reduce((s, e) => transition(supervisionMachine, s, e)[0], snap);
const round = (id: string, at = 1000): RoundInFlight => ({
  id,
  started_at: at,
  deadline_at: at + 600_000,
  reasons: [{ session_id: 'cs_a', alias: 'w1', trigger: 'pending_handling', state: 'pending_handling', message: null }],
});

describe('supervision machine', () => {
  it('given never enabled, is off with ever_enabled false', () => {
    const s = start();
    expect(s.value).toBe('off');
    expect(s.context.ever_enabled).toBe(false);
  });

  it('when enabled, is on and idle with the default 60 turns', () => {
    const s = apply(start(), { type: 'ENABLE', at: 1, started_by: 'user', task_hint: 'ship it' });
    expect(s.value).toEqual({ on: 'idle' });
    expect(s.context).toMatchObject({ ever_enabled: true, turns_used: 0, max_turns: 60, task_hint: 'ship it', started_by: 'user', closed_reason: null });
  });

  it('counts a turn per round and returns to idle when the round ends', () => {
    const s = apply(
      start(),
      { type: 'ENABLE', at: 1, started_by: 'user' },
      { type: 'ROUND_START', at: 2, round: round('r1') },
    );
    expect(s.value).toEqual({ on: 'in_round' });
    expect(s.context.turns_used).toBe(1);
    expect(s.context.round?.deadline_at).toBe(601_000);
    const ended = apply(s, { type: 'ROUND_END', at: 3, round_id: 'r1', outcome: 'completed' });
    expect(ended.value).toEqual({ on: 'idle' });
    expect(ended.context.round).toBeNull();
  });

  it('given a round in flight, when its journaled round.failed is applied, then it ends as the other ends do: back to idle, its turn used, and a next round can start', () => {
    const s = apply(start(), { type: 'ENABLE', at: 1, started_by: 'user' }, { type: 'ROUND_START', at: 2, round: round('r1') });
    const end = toMachineEvent('round.failed', { round_id: 'r1', reason: 'the brain crashed' }, 3);
    expect(end).toEqual({ type: 'ROUND_END', at: 3, round_id: 'r1', outcome: 'failed' });
    const failed = apply(s, end as SupervisionEvent);
    expect(failed.value).toEqual({ on: 'idle' });
    expect(failed.context).toMatchObject({ round: null, turns_used: 1 });
    const next = apply(failed, { type: 'ROUND_START', at: 4, round: round('r2') });
    expect(next.context).toMatchObject({ round: { id: 'r2' }, turns_used: 2 });
  });

  it('keeps one round in flight: a second start or a stale end changes nothing', () => {
    const s = apply(start(), { type: 'ENABLE', at: 1, started_by: 'user' }, { type: 'ROUND_START', at: 2, round: round('r1') });
    const again = apply(s, { type: 'ROUND_START', at: 3, round: round('r2') }, { type: 'ROUND_END', at: 4, round_id: 'r0', outcome: 'completed' });
    expect(again.context.round?.id).toBe('r1');
    expect(again.context.turns_used).toBe(1);
  });

  it('when enabled again, resets turns_used and keeps what was not given', () => {
    const s = apply(
      start(),
      { type: 'ENABLE', at: 1, started_by: 'user', task_hint: 'goal', max_turns: 5 },
      { type: 'ROUND_START', at: 2, round: round('r1') },
      { type: 'ROUND_END', at: 3, round_id: 'r1', outcome: 'completed' },
      { type: 'ENABLE', at: 4, started_by: 'user' },
    );
    expect(s.context).toMatchObject({ turns_used: 0, max_turns: 5, task_hint: 'goal' });
  });

  it('starts no round once the turns are spent', () => {
    const s = apply(
      start(),
      { type: 'ENABLE', at: 1, started_by: 'user', max_turns: 1 },
      { type: 'ROUND_START', at: 2, round: round('r1') },
      { type: 'ROUND_END', at: 3, round_id: 'r1', outcome: 'completed' },
    );
    expect(s.can({ type: 'ROUND_START', at: 4, round: round('r2') })).toBe(false);
    expect(apply(s, { type: 'ROUND_START', at: 4, round: round('r2') }).context.turns_used).toBe(1);
  });

  it('when disabled, records the reason and summary and drops the round in flight', () => {
    const s = apply(
      start(),
      { type: 'ENABLE', at: 1, started_by: 'user' },
      { type: 'ROUND_START', at: 2, round: round('r1') },
      { type: 'DISABLE', at: 3, reason: 'finished', summary: 'all green' },
    );
    expect(s.value).toBe('off');
    expect(s.context).toMatchObject({ closed_reason: 'finished', summary: 'all green', round: null, turns_used: 1 });
  });

  it('keeps user ownership when a workflow enables supervision the user already had on', () => {
    const s = apply(start(), { type: 'ENABLE', at: 1, started_by: 'user' }, { type: 'ENABLE', at: 2, started_by: 'workflow' });
    expect(s.context.started_by).toBe('user');
    const wf = apply(start(), { type: 'ENABLE', at: 1, started_by: 'workflow' }, { type: 'ENABLE', at: 2, started_by: 'user' });
    expect(wf.context.started_by).toBe('user');
  });

  it('when enabled after a close, starts fresh', () => {
    const s = apply(
      start(),
      { type: 'ENABLE', at: 1, started_by: 'user', task_hint: 'old', max_turns: 3 },
      { type: 'DISABLE', at: 2, reason: 'disabled' },
      { type: 'ENABLE', at: 3, started_by: 'workflow' },
    );
    expect(s.context).toMatchObject({ max_turns: 60, task_hint: '', started_by: 'workflow', closed_reason: null, summary: null });
  });

  it('steps exactly as xstate transition() does, through every state, taken and refused events alike, with one scope for all', () => {
    // Given a run through every state, with events each state refuses (a round ending that is not in flight, a round
    // starting with no turn left or while off) and a close
    const events: SupervisionEvent[] = [
      { type: 'ROUND_START', at: 1, round: round('r0') },
      { type: 'ROUND_END', at: 2, round_id: 'r0', outcome: 'completed' },
      { type: 'ENABLE', at: 3, started_by: 'workflow', task_hint: 'ship it', max_turns: 1 },
      { type: 'ROUND_START', at: 4, round: round('r1', 4) },
      { type: 'ROUND_START', at: 5, round: round('r2', 5) },
      { type: 'ROUND_END', at: 6, round_id: 'r2', outcome: 'failed' },
      { type: 'ENABLE', at: 7, started_by: 'user' },
      { type: 'ROUND_END', at: 8, round_id: 'r1', outcome: 'timed_out' },
      { type: 'ROUND_START', at: 9, round: round('r3', 9) },
      { type: 'DISABLE', at: 10, reason: 'max_turns', summary: 'done' },
      { type: 'ROUND_START', at: 11, round: round('r4', 11) },
      { type: 'ENABLE', at: 12, started_by: 'user', max_turns: 5 },
      { type: 'ROUND_START', at: 13, round: round('r5', 13) },
      { type: 'DISABLE', at: 14, reason: 'disabled' },
    ];
    // When each is stepped both ways from the same snapshot; Then every snapshot is the same, state, context and status
    let snap = start();
    const seen = new Set<string>();
    for (const e of events) {
      const expected = transition(supervisionMachine, snap, e)[0];
      const next = nextSupervision(snap, e);
      expect({ value: next.value, context: next.context, status: next.status }).toEqual({ value: expected.value, context: expected.context, status: expected.status });
      seen.add(JSON.stringify(next.value));
      snap = next;
    }
    expect([...seen].sort()).toEqual(['"off"', '{"on":"idle"}', '{"on":"in_round"}']);
  });
});
