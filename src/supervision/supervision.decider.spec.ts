import { ScopeSession } from './supervision-scope';
import { ScopeRequest, SupervisionCommand, SupervisionJournalEvent, SupervisionState, decide, evolve, forgetExpired, initialSupervisionState, isOn } from './supervision.decider';
import { MAX_TASK_HINT, RoundInFlight, WakeReason } from './supervision.machine';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');

const reason: WakeReason = { alias: 'w1', message: 'no creds', session_id: 'cs_1', state: 'blocked', trigger: 'notify_blocked' };
const round = (id: string): RoundInFlight => ({ id, started_at: T0, deadline_at: T0 + 60_000, reasons: [reason] });

const enabled = (data: Partial<{ max_turns: number; task_hint: string }> = {}): SupervisionJournalEvent => ({
  type: 'supervision.enabled',
  data: { started_by: 'user', ...data },
});
const started = (id: string): SupervisionJournalEvent => ({ type: 'round.started', data: { round: round(id) } });
const completed = (id: string): SupervisionJournalEvent => ({ type: 'round.completed', data: { round_id: id } });
const disabled = (reason: 'converged' | 'disabled' = 'converged'): SupervisionJournalEvent => ({ type: 'supervision.disabled', data: { reason } });

/** Given: the journal so far, folded as replay folds it (one ms apart, seq 1, 2, …). */
function given(...events: SupervisionJournalEvent[]): SupervisionState {
  return events.reduce((s, e, i) => evolve(s, { ...e, at: T0 + i, seq: i + 1 }), initialSupervisionState());
}

/** Two live sessions, both supervised. */
const sessions: ScopeSession[] = [
  { id: 'cs_1', alias: 'w1', excluded: false, active: true },
  { id: 'cs_2', alias: 'w2', excluded: false, active: true },
];
const scope = (mode: ScopeRequest['mode'], session_ids: string[], over: ScopeSession[] = sessions): ScopeRequest => ({ mode, session_ids, sessions: over });

/** When: the command; Then: the events it journals, or its refusal. */
const when = (s: SupervisionState, cmd: SupervisionCommand) => decide(cmd, s);

describe('supervision decide/evolve', () => {
  describe('enable', () => {
    it('Given nothing, When enabled with a goal and a turn budget, Then supervision.enabled is journaled and supervision is on', () => {
      const d = when(given(), { type: 'enable', started_by: 'user', task_hint: 'ship it', max_turns: 5 });
      expect(d).toEqual({ events: [{ type: 'supervision.enabled', data: { started_by: 'user', task_hint: 'ship it', max_turns: 5 } }] });
      const s = given(...d.events);
      expect(isOn(s)).toBe(true);
      expect(s.machine.context).toMatchObject({ task_hint: 'ship it', max_turns: 5, turns_used: 0 });
    });

    it('Given nothing, When enabled by /supervise (a round at once), Then the event says so for the supervisor, and the state is as for any enable', () => {
      const d = when(given(), { type: 'enable', started_by: 'user', task_hint: 'ship it', round_now: true });
      expect(d).toEqual({ events: [{ type: 'supervision.enabled', data: { started_by: 'user', task_hint: 'ship it', round_now: true } }] });
      expect(given(...d.events).machine.context).toMatchObject({ task_hint: 'ship it', turns_used: 0 });
    });

    it('Given supervision on with a turn used, When enabled again, Then it is journaled and resets turns_used', () => {
      const s = given(enabled(), started('rd_1'), completed('rd_1'));
      expect(s.machine.context.turns_used).toBe(1);
      const d = when(s, { type: 'enable', started_by: 'workflow' });
      expect(d.events).toEqual([{ type: 'supervision.enabled', data: { started_by: 'workflow' } }]);
      expect(d.events.reduce((acc, e) => evolve(acc, { ...e, at: T0 + 9, seq: 9 }), s).machine.context).toMatchObject({ turns_used: 0, started_by: 'user' });
    });

    it.each([0, 1001, 1.5])('When enabled with max_turns %p, Then it is refused as invalid input', (max_turns) => {
      expect(when(given(), { type: 'enable', started_by: 'user', max_turns })).toEqual({
        events: [],
        error: { code: 'invalid_input', message: 'max_turns: must be an integer in 1..1000' },
      });
    });

    it('When enabled with a goal over the limit, Then it is refused as invalid input', () => {
      expect(when(given(), { type: 'enable', started_by: 'user', task_hint: 'x'.repeat(MAX_TASK_HINT + 1) }).error).toEqual({
        code: 'invalid_input',
        message: `task_hint: must be a string of at most ${MAX_TASK_HINT} characters`,
      });
    });
  });

  describe('disable and finish', () => {
    it('Given supervision off, When disabled, Then nothing is journaled (turning off twice is no error)', () => {
      expect(when(given(), { type: 'disable', reason: 'disabled' })).toEqual({ events: [] });
      expect(when(given(enabled(), disabled()), { type: 'disable', reason: 'disabled' })).toEqual({ events: [] });
    });

    it('Given supervision on and idle, When disabled, Then supervision.disabled is journaled with the reason and summary', () => {
      const d = when(given(enabled()), { type: 'disable', reason: 'workflow_converged', summary: 'done' });
      expect(d.events).toEqual([{ type: 'supervision.disabled', data: { reason: 'workflow_converged', summary: 'done' } }]);
      expect(isOn(given(enabled(), ...d.events))).toBe(false);
    });

    it('Given a round in flight, When disabled, Then the round is interrupted first, so none stays in flight', () => {
      const d = when(given(enabled(), started('rd_1')), { type: 'disable', reason: 'disabled' });
      expect(d.events).toEqual([
        { type: 'round.interrupted', data: { round_id: 'rd_1', reasons: [reason], reason: 'supervision_closed' } },
        { type: 'supervision.disabled', data: { reason: 'disabled' } },
      ]);
      expect(given(enabled(), started('rd_1'), ...d.events).machine.context.round).toBeNull();
    });

    it('Given a round in flight, When finished with a wrap-up, Then the round is interrupted and supervision closes as finished', () => {
      expect(when(given(enabled(), started('rd_1')), { type: 'finish', summary: 'all green' }).events).toEqual([
        { type: 'round.interrupted', data: { round_id: 'rd_1', reasons: [reason], reason: 'supervision_closed' } },
        { type: 'supervision.disabled', data: { reason: 'finished', summary: 'all green' } },
      ]);
    });

    it('Given supervision off, When finished, Then it is refused as supervision_off, naming how it closed', () => {
      expect(when(given(), { type: 'finish', summary: 'x' })).toEqual({
        events: [],
        error: { code: 'supervision_off', message: 'supervision is not on; post a wrap-up with reply_to_human' },
      });
      expect(when(given(enabled(), disabled('converged')), { type: 'finish' }).error).toEqual({
        code: 'supervision_off',
        message: 'supervision is not on (closed: converged); post a wrap-up with reply_to_human',
      });
    });
  });

  describe('set_scope', () => {
    it('Given the default scope, When only is set, Then supervision.scope_set is journaled; the same scope again, or all at first, journal nothing', () => {
      const d = when(given(), { type: 'set_scope', scope: scope('only', ['w1']) });
      expect(d.events).toEqual([{ type: 'supervision.scope_set', data: { mode: 'only' } }]);
      const s = given(...d.events);
      expect(s.scope_mode).toBe('only');
      // w2 is excluded now: only w1 changes nothing more.
      const after = [sessions[0], { ...sessions[1], excluded: true }];
      expect(when(s, { type: 'set_scope', scope: scope('only', ['w1'], after) }).events).toEqual([]);
      expect(when(given(), { type: 'set_scope', scope: scope('all', []) }).events).toEqual([]);
    });

    it('Given scope only, When sessions are inverted, Then the rule it found is journaled with the exclusions it flips', () => {
      const s = given({ type: 'supervision.scope_set', data: { mode: 'only' } });
      expect(when(s, { type: 'set_scope', scope: scope('invert', ['w2']) }).events).toEqual([{ type: 'supervision.scope_set', data: { mode: 'only' } }]);
    });

    it('Given the rule already except, When except names another session, Then the scope is journaled again: its exclusions go with it', () => {
      const s = given({ type: 'supervision.scope_set', data: { mode: 'except' } });
      expect(when(s, { type: 'set_scope', scope: scope('except', ['w2']) }).events).toEqual([{ type: 'supervision.scope_set', data: { mode: 'except' } }]);
    });

    it('When only names no live session, Then it is refused as scope_names_no_session and nothing is journaled', () => {
      expect(when(given(), { type: 'set_scope', scope: scope('only', ['w99']) })).toEqual({
        events: [],
        error: { code: 'scope_names_no_session', message: 'session_ids: mode only needs at least one valid session id (unknown: w99)' },
      });
    });
  });

  describe('start_round', () => {
    it('Given supervision on and idle, When a round starts, Then round.started is journaled and a turn is used', () => {
      const d = when(given(enabled()), { type: 'start_round', round: round('rd_1') });
      expect(d.events).toEqual([started('rd_1')]);
      expect(given(enabled(), ...d.events).machine.context).toMatchObject({ turns_used: 1, round: round('rd_1') });
    });

    it('Given supervision off, When a round starts, Then it is refused as supervision_off', () => {
      expect(when(given(), { type: 'start_round', round: round('rd_1') }).error?.code).toBe('supervision_off');
    });

    it('Given a round in flight, When another starts, Then it is refused as round_in_flight', () => {
      expect(when(given(enabled(), started('rd_1')), { type: 'start_round', round: round('rd_2') }).error).toEqual({
        code: 'round_in_flight',
        message: 'round rd_1 is in flight; one round at a time',
      });
    });

    it('Given every turn used and supervision still on (a journal that did not close), When a round starts, Then it is refused as max_turns_reached', () => {
      const s = given(enabled({ max_turns: 1 }), started('rd_1'), completed('rd_1'));
      expect(when(s, { type: 'start_round', round: round('rd_2') }).error).toEqual({ code: 'max_turns_reached', message: 'all 1 turns are used' });
    });
  });

  describe('complete_round and fail_round', () => {
    it('Given a round in flight, When it is completed with a summary, Then round.completed is journaled and supervision is idle again', () => {
      const d = when(given(enabled(), started('rd_1')), { type: 'complete_round', round_id: 'rd_1', summary: 'sent creds' });
      expect(d.events).toEqual([{ type: 'round.completed', data: { round_id: 'rd_1', summary: 'sent creds' } }]);
      expect(given(enabled(), started('rd_1'), ...d.events).machine.matches({ on: 'idle' })).toBe(true);
    });

    it('Given the last turn in flight, When it is completed, Then supervision closes as max_turns with it', () => {
      expect(when(given(enabled({ max_turns: 1 }), started('rd_1')), { type: 'complete_round', round_id: 'rd_1' }).events).toEqual([
        completed('rd_1'),
        { type: 'supervision.disabled', data: { reason: 'max_turns' } },
      ]);
    });

    it('Given a round that ended, When it is completed or failed, Then it is refused as round_already_ended, saying how it ended', () => {
      const s = given(enabled(), started('rd_1'), { type: 'round.timed_out', data: { round_id: 'rd_1' } });
      expect(when(s, { type: 'complete_round', round_id: 'rd_1' })).toEqual({
        events: [],
        error: { code: 'round_already_ended', message: 'round rd_1 is already timed_out' },
      });
      expect(when(s, { type: 'fail_round', round_id: 'rd_1', reason: 'crashed' }).error?.code).toBe('round_already_ended');
    });

    it('Given no such round, When it is completed or failed, Then it is refused as round_not_found', () => {
      const s = given(enabled(), started('rd_1'));
      expect(when(s, { type: 'complete_round', round_id: 'rd_x' }).error).toEqual({ code: 'round_not_found', message: 'no round rd_x' });
      expect(when(s, { type: 'fail_round', round_id: 'rd_x', reason: 'crashed' }).error?.code).toBe('round_not_found');
    });

    it('Given a round in flight, When its delivery failed, Then round.failed is journaled with the reason, and the turn stays used', () => {
      const d = when(given(enabled(), started('rd_1')), { type: 'fail_round', round_id: 'rd_1', reason: 'the brain crashed' });
      expect(d.events).toEqual([{ type: 'round.failed', data: { round_id: 'rd_1', reason: 'the brain crashed' } }]);
      expect(given(enabled(), started('rd_1'), ...d.events).machine.context).toMatchObject({ round: null, turns_used: 1 });
    });
  });

  describe('time_out_round', () => {
    it('Given a round in flight, When its deadline passes, Then round.timed_out is journaled (and on the last turn, supervision closes)', () => {
      expect(when(given(enabled(), started('rd_1')), { type: 'time_out_round', round_id: 'rd_1' }).events).toEqual([{ type: 'round.timed_out', data: { round_id: 'rd_1' } }]);
      expect(when(given(enabled({ max_turns: 1 }), started('rd_1')), { type: 'time_out_round', round_id: 'rd_1' }).events.map((e) => e.type)).toEqual([
        'round.timed_out',
        'supervision.disabled',
      ]);
    });

    it('Given the round ended already, When its deadline passes, Then nothing is journaled and nothing is refused', () => {
      expect(when(given(enabled(), started('rd_1'), completed('rd_1')), { type: 'time_out_round', round_id: 'rd_1' })).toEqual({ events: [] });
    });
  });

  describe('resume (a node took the lease and found supervision on)', () => {
    it('Given a round in flight, When resumed cutting it off, Then it is interrupted with its reasons and why (and on the last turn supervision closes)', () => {
      expect(when(given(enabled(), started('rd_1')), { type: 'resume', interrupt: 'restart' }).events).toEqual([
        { type: 'round.interrupted', data: { round_id: 'rd_1', reasons: [reason], reason: 'restart' } },
      ]);
      expect(when(given(enabled({ max_turns: 1 }), started('rd_1')), { type: 'resume', interrupt: 'leader_lost' }).events).toEqual([
        { type: 'round.interrupted', data: { round_id: 'rd_1', reasons: [reason], reason: 'leader_lost' } },
        { type: 'supervision.disabled', data: { reason: 'max_turns' } },
      ]);
    });

    it('Given a round in flight that a brain still follows, When resumed keeping it, Then nothing is journaled and it stays in flight', () => {
      expect(when(given(enabled({ max_turns: 1 }), started('rd_1')), { type: 'resume', interrupt: null })).toEqual({ events: [] });
    });

    it('Given supervision idle, or off, When resumed, Then nothing is journaled', () => {
      expect(when(given(enabled()), { type: 'resume', interrupt: 'restart' })).toEqual({ events: [] });
      expect(when(given(), { type: 'resume', interrupt: 'restart' })).toEqual({ events: [] });
    });
  });

  describe('take_loop', () => {
    const loop = (over: Partial<{ signature: string; escalate_after: number; pattern: string }> = {}): SupervisionCommand => ({
      type: 'take_loop',
      session_id: 'cs_1',
      pattern: 'repeated_call',
      signature: 'sig-a',
      escalate_after: 2,
      ...over,
    });
    const woken = (wakes: number, signature = 'sig-a'): SupervisionJournalEvent => ({ type: 'supervision.loop_woken', data: { session_id: 'cs_1', pattern: 'repeated_call', signature, wakes } });

    it('Given supervision on, When a loop is taken for the first time, Then it wakes the brain: loop_woken, wake-up 1', () => {
      expect(when(given(enabled()), loop())).toEqual({ events: [woken(1)] });
      expect(given(enabled(), woken(1)).loop_wakes.get('cs_1:repeated_call')).toEqual({ signature: 'sig-a', wakes: 1, at: T0 + 1 });
    });

    it('Given the brain woken escalate_after times for this loop, When it is taken again, Then it is escalated, and the count starts again after', () => {
      expect(when(given(enabled(), woken(1)), loop())).toEqual({ events: [woken(2)] });
      const escalated = when(given(enabled(), woken(1), woken(2)), loop());
      expect(escalated).toEqual({ events: [{ type: 'supervision.loop_escalated', data: { session_id: 'cs_1', pattern: 'repeated_call', signature: 'sig-a', wakes: 2 } }] });
      expect(given(enabled(), woken(1), woken(2), ...escalated.events).loop_wakes.size).toBe(0);
    });

    it('Given wake-ups for another loop of the same pattern (another signature), When this one is taken, Then its count starts at 1', () => {
      expect(when(given(enabled(), woken(1, 'sig-old'), woken(2, 'sig-old')), loop())).toEqual({ events: [woken(1)] });
    });

    it('Given escalate_after 0, When the loop is taken again and again, Then it only ever wakes the brain', () => {
      expect(when(given(enabled(), woken(1), woken(2), woken(3)), loop({ escalate_after: 0 }))).toEqual({ events: [woken(4)] });
    });

    it('Given supervision off, When a loop is taken, Then it is refused as supervision_off', () => {
      expect(when(given(), loop()).error?.code).toBe('supervision_off');
    });

    it('Given wake-ups older than the retention, When memory is let go of, Then their counts leave (the journal keeps them)', () => {
      const s = given(enabled(), woken(1));
      expect(forgetExpired(s, T0 + 10_000, 5_000).loop_wakes.size).toBe(0);
      expect(forgetExpired(s, T0 + 1_000, 5_000).loop_wakes.size).toBe(1);
    });
  });

  describe('detect_stall', () => {
    const stall = { type: 'detect_stall', session_id: 'cs_1', kind: 'waiting_permission', stalled_for_s: 300, cooldown_until: T0 + 600_000 } as const;

    it('Given supervision on, When a stall is detected, Then supervision.stall_detected is journaled with its cooldown', () => {
      expect(when(given(enabled()), stall).events).toEqual([
        { type: 'supervision.stall_detected', data: { session_id: 'cs_1', kind: 'waiting_permission', stalled_for_s: 300, cooldown_until: T0 + 600_000 } },
      ]);
    });

    it('Given supervision off, When a stall is detected, Then it is refused as supervision_off', () => {
      expect(when(given(), stall).error?.code).toBe('supervision_off');
    });
  });

  describe('enable with a scope', () => {
    it('Given two live sessions, When enabled with scope except w1, Then the scope and the enable are one decision, the scope first', () => {
      expect(when(given(), { type: 'enable', started_by: 'user', task_hint: 'ship', scope: scope('except', ['w1']) }).events).toEqual([
        { type: 'supervision.scope_set', data: { mode: 'except' } },
        { type: 'supervision.enabled', data: { started_by: 'user', task_hint: 'ship' } },
      ]);
    });

    it('When the scope names no live session, Then the enable is refused as scope_names_no_session, and nothing is journaled', () => {
      expect(when(given(), { type: 'enable', started_by: 'user', scope: scope('only', ['w99']) })).toMatchObject({ events: [], error: { code: 'scope_names_no_session' } });
    });

    it('When both the turn budget and the scope are wrong, Then the budget is named: the enable is judged before its scope', () => {
      expect(when(given(), { type: 'enable', started_by: 'user', max_turns: 0, scope: scope('only', ['w99']) }).error?.code).toBe('invalid_input');
    });
  });

  describe('what rounds covered', () => {
    const naming = (id: string, at: number, ...sessions: string[]): SupervisionJournalEvent => ({
      type: 'round.started',
      data: { round: { id, started_at: at, deadline_at: at + 60_000, reasons: sessions.map((s) => ({ ...reason, session_id: s })) } },
    });

    it('Given rounds that named sessions, Then each session is covered by the last round naming it, from its start; the system reason covers none', () => {
      const s = given(enabled(), naming('rd_1', T0, 'cs_1', 'cs_2', '-'), completed('rd_1'), naming('rd_2', T0 + 50, 'cs_2'));
      expect([...s.covered]).toEqual([
        ['cs_1', { at: T0, round_id: 'rd_1' }],
        ['cs_2', { at: T0 + 50, round_id: 'rd_2' }],
      ]);
    });

    it.each([
      ['failed', { type: 'round.failed', data: { round_id: 'rd_2', reason: 'the webhook answered 500' } }],
      ['interrupted', { type: 'round.interrupted', data: { round_id: 'rd_2', reasons: [] } }],
    ] as Array<[string, SupervisionJournalEvent]>)('Given a round that %s, Then the sessions it covered count as unseen again; those other rounds covered stay covered', (_how, end) => {
      const s = given(enabled(), naming('rd_1', T0, 'cs_1'), completed('rd_1'), naming('rd_2', T0 + 50, 'cs_2'), end);
      expect([...s.covered.keys()]).toEqual(['cs_1']);
    });

    it('Given rounds past their retention, When they leave memory, Then what they covered leaves with them; the round in flight still covers', () => {
      const s = given(enabled(), naming('rd_1', T0, 'cs_1'), completed('rd_1'), naming('rd_2', T0 + 5, 'cs_2'));
      expect([...forgetExpired(s, T0 + 2 + 1000, 1000).covered.keys()]).toEqual(['cs_2']);
    });
  });

  describe('include_external (the user\'s choice that external claude sessions join)', () => {
    it('Given no rule yet, When enabled with include_external, Then the rule is journaled before the enable, and folded', () => {
      const d = when(given(), { type: 'enable', started_by: 'user', include_external: true });
      expect(d.events).toEqual([
        { type: 'supervision.scope_set', data: { mode: 'all', include_external: true } },
        { type: 'supervision.enabled', data: { started_by: 'user' } },
      ]);
      expect(given(...d.events)).toMatchObject({ scope_mode: 'all', include_external: true });
    });

    it('Given the rule set, When a scope without include_external is set, Then the rule stays; When one says false, Then it goes', () => {
      const s = given({ type: 'supervision.scope_set', data: { mode: 'all', include_external: true } });
      const only = when(s, { type: 'set_scope', scope: scope('only', ['w1']) });
      expect(only.events).toEqual([{ type: 'supervision.scope_set', data: { mode: 'only' } }]);
      expect(given({ type: 'supervision.scope_set', data: { mode: 'all', include_external: true } }, ...only.events).include_external).toBe(true);
      const off = when(s, { type: 'set_scope', scope: { ...scope('all', []), include_external: false } });
      expect(off.events).toEqual([{ type: 'supervision.scope_set', data: { mode: 'all', include_external: false } }]);
    });
  });

  describe('rounds, as the state holds them', () => {
    it('Given supervision on with a goal, When a round starts, Then its view is in the state: in flight, its turn, its seq and the prompt the brain reads', () => {
      const s = given(enabled({ task_hint: 'ship it', max_turns: 3 }), started('rd_1'));
      const held = s.rounds.get('rd_1');
      expect(held).toMatchObject({
        seq: 2,
        view: { id: 'rd_1', turn: 1, status: 'in_flight', started_at: '2026-11-25T10:00:00.000Z', deadline_at: '2026-11-25T10:01:00.000Z', ended_at: null, reasons: [reason], summary: null, failure: null },
      });
      expect(held?.view.prompt).toContain('Supervision round rd_1 (turn 1 of 3; 2 left), started ');
      expect(held?.view.prompt).toContain('Goal: ship it');
    });

    it('When the round is completed with a summary, Then its view says so, ended at the time of the event; the rounds before stay as they were', () => {
      const before = given(enabled(), started('rd_1'));
      const s = evolve(before, { type: 'round.completed', data: { round_id: 'rd_1', summary: 'sent creds' }, at: T0 + 5000, seq: 3 });
      expect(s.rounds.get('rd_1')?.view).toMatchObject({ status: 'completed', summary: 'sent creds', ended_at: '2026-11-25T10:00:05.000Z', failure: null });
      expect(before.rounds.get('rd_1')?.view.status).toBe('in_flight');
    });

    it('When the round fails, Then its view carries why; When it times out or is interrupted, Then its view says that', () => {
      const failed = given(enabled(), started('rd_1'), { type: 'round.failed', data: { round_id: 'rd_1', reason: 'the brain crashed' } });
      expect(failed.rounds.get('rd_1')?.view).toMatchObject({ status: 'failed', failure: 'the brain crashed', summary: null });
      expect(given(enabled(), started('rd_1'), { type: 'round.timed_out', data: { round_id: 'rd_1' } }).rounds.get('rd_1')?.view.status).toBe('timed_out');
      expect(given(enabled(), started('rd_1'), { type: 'round.interrupted', data: { round_id: 'rd_1', reasons: [reason] } }).rounds.get('rd_1')?.view.status).toBe('interrupted');
    });

    it('Given a journal written before a close interrupted the round in flight, When supervision.disabled folds alone, Then the round reads interrupted', () => {
      expect(given(enabled(), started('rd_1'), disabled()).rounds.get('rd_1')?.view).toMatchObject({ status: 'interrupted', ended_at: '2026-11-25T10:00:00.002Z' });
    });

    it('Given ended rounds, When their retention passes, Then they leave memory, the round in flight stays, and nothing left is the same state', () => {
      const s = given(enabled(), started('rd_1'), completed('rd_1'), started('rd_2'));
      // rd_1 ended at T0 + 2.
      expect([...forgetExpired(s, T0 + 2 + 999, 1000).rounds.keys()]).toEqual(['rd_1', 'rd_2']);
      expect(forgetExpired(s, T0 + 2 + 999, 1000)).toBe(s);
      expect([...forgetExpired(s, T0 + 2 + 1000, 1000).rounds.keys()]).toEqual(['rd_2']);
      expect([...forgetExpired(s, T0 + 10 ** 9, Infinity).rounds.keys()]).toEqual(['rd_1', 'rd_2']);
    });

    it('Given a round that left memory, When it is completed, Then it is refused as round_not_found', () => {
      const s = forgetExpired(given(enabled(), started('rd_1'), completed('rd_1')), T0 + 10_000, 1000);
      expect(when(s, { type: 'complete_round', round_id: 'rd_1' }).error).toEqual({ code: 'round_not_found', message: 'no round rd_1' });
    });
  });

  describe('stall cooldowns, as the state holds them', () => {
    const stallOf = (session_id: string, kind: string, cooldown_until: number): SupervisionJournalEvent => ({
      type: 'supervision.stall_detected',
      data: { session_id, kind, stalled_for_s: 900, cooldown_until },
    });

    it('When a stall is journaled, Then its (session, kind) cools down until the time it names', () => {
      expect([...given(enabled(), stallOf('cs_1', 'pending_decision', T0 + 60_000)).cooldowns]).toEqual([['cs_1:pending_decision', T0 + 60_000]]);
    });

    it('Given a cooldown that ran out, When the next stall is journaled, Then the one run out leaves with it', () => {
      const s = given(enabled(), stallOf('cs_1', 'pending_decision', T0 + 1), stallOf('cs_2', 'pending_handling', T0 + 60_000));
      // The second stall folds at T0 + 2, after the first cooldown ran out.
      expect([...s.cooldowns]).toEqual([['cs_2:pending_handling', T0 + 60_000]]);
    });

    it('When cooldowns run out with time, Then forgetExpired lets them go', () => {
      const s = given(enabled(), stallOf('cs_1', 'pending_decision', T0 + 10_000));
      expect(forgetExpired(s, T0 + 9_999, Infinity).cooldowns.size).toBe(1);
      expect(forgetExpired(s, T0 + 10_000, Infinity).cooldowns.size).toBe(0);
    });
  });

  it('Given the events decided one command after another, When they are folded again (a restart), Then the same state comes back, rounds and cooldowns included', () => {
    const journal: SupervisionJournalEvent[] = [];
    let s = initialSupervisionState();
    const commands: SupervisionCommand[] = [
      { type: 'set_scope', scope: scope('except', ['w1']) },
      { type: 'enable', started_by: 'user', max_turns: 3 },
      { type: 'start_round', round: round('rd_1') },
      { type: 'complete_round', round_id: 'rd_1', summary: 'done' },
      { type: 'detect_stall', session_id: 'cs_2', kind: 'pending_decision', stalled_for_s: 900, cooldown_until: T0 + 60_000 },
      { type: 'start_round', round: round('rd_2') },
      { type: 'fail_round', round_id: 'rd_2', reason: 'crashed' },
      { type: 'start_round', round: round('rd_3') },
      { type: 'time_out_round', round_id: 'rd_3' },
    ];
    for (const cmd of commands) {
      const d = decide(cmd, s);
      expect(d.error).toBeUndefined();
      for (const e of d.events) {
        journal.push(e);
        s = evolve(s, { ...e, at: T0 + journal.length - 1, seq: journal.length });
      }
    }
    const replayed = given(...journal);
    expect({ ...replayed, machine: null }).toEqual({ ...s, machine: null });
    expect({ value: replayed.machine.value, context: replayed.machine.context }).toEqual({ value: s.machine.value, context: s.machine.context });
    expect(replayed.machine.context).toMatchObject({ closed_reason: 'max_turns', turns_used: 3 });
    expect([...replayed.rounds.values()].map((r) => [r.view.id, r.view.status])).toEqual([
      ['rd_1', 'completed'],
      ['rd_2', 'failed'],
      ['rd_3', 'timed_out'],
    ]);
    expect(replayed.cooldowns.get('cs_2:pending_decision')).toBe(T0 + 60_000);
    expect(replayed.last_event_at).toBe(T0 + journal.length - 1);
  });
});
