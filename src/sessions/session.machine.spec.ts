import { SessionEvent, SessionInput } from './session.events';
import { createActor, transition } from 'xstate';
import { SessionSnapshot, accepts, attentionSince, createSession, nextSnapshot, nextState, sessionMachine, stateOf } from './session.machine';
import { restoreSession, storeSession } from './session.snapshot';

/** A simulated clock: every event is stamped by it, nothing reads real time. */
function simulatedClock(start = 1_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const input = (over: Partial<SessionInput> = {}): SessionInput => ({
  id: 'cs_test',
  alias: 'w1',
  title: 't',
  runtime: 'command',
  profile_id: null,
  cwd: '/tmp',
  command: 'node',
  args: [],
  env: {},
  excluded: false,
  created_at: 1_000,
  ...over,
});

type Ev = SessionEvent extends infer E ? (E extends SessionEvent ? Omit<E, 'at'> : never) : never;

function apply(snap: SessionSnapshot, clock: { now: () => number }, ...events: Ev[]): SessionSnapshot {
  return events.reduce((s, e) => {
    const next = nextSnapshot(s, { ...e, at: clock.now() } as SessionEvent);
    if (!next) throw new Error(`${e.type} rejected in ${stateOf(s)}`);
    return next;
  }, snap);
}

const started: Ev = { type: 'session.started', pid: 42, pid_start_time: '777', idle: false };

describe('session machine', () => {
  it('given no input, as in the throwaway actor behind every pure transition(), the initial state does not fail', () => {
    // A throw there is caught by xstate on every step, and made a signal's decision several times dearer.
    // @ts-expect-error: xstate builds that actor without input
    const actor = createActor(sessionMachine);
    expect(actor.getSnapshot().status).toBe('active');
  });

  it('given every state and every event, when stepped without an actor, then the next state and context are those of xstate\'s transition(), and it is taken exactly when snapshot.can says so', () => {
    const clock = simulatedClock();
    const ask = (request_id: string): Ev => ({ type: 'session.permission_requested', request_id, tool: 'Bash', input: { n: request_id } });
    const fresh = createSession(input());
    const working = apply(fresh, clock, started);
    const snapshots = [
      fresh,
      working,
      apply(working, clock, { type: 'session.turn_ended', result: 'r' }),
      apply(working, clock, { type: 'session.asked_human', question: 'q' }),
      apply(working, clock, ask('r1')),
      apply(working, clock, ask('r1'), ask('r2'), ask('r3')),
      apply(working, clock, { type: 'session.held', reason: 'loop', detail: 'd' }, { type: 'session.exited', code: 0, signal: null, reason: 'exited' }),
    ];
    const resolved = (request_id: string, by?: 'profile'): Ev => ({ type: 'session.permission_resolved', request_id, decision: 'deny', reason: 'no', ...(by ? { by, rule: 'Bash', tool: 'Bash', input: {} } : {}) });
    const events: Ev[] = [
      started,
      { ...started, idle: true } as Ev,
      { type: 'session.runtime_session_assigned', runtime_session_id: 'rs' },
      { type: 'session.message_dispatched', text: 'go' },
      { type: 'session.progress', status: 'completed', message: 'm' },
      { type: 'session.blocked', reason: 'b' },
      { type: 'session.asked_human', question: 'q2' },
      { type: 'session.context_requested', query: 'c' },
      { type: 'session.turn_ended', result: 'x' },
      { type: 'session.turn_ended', result: null, superseded: true },
      ask('r9'),
      resolved('r1'),
      resolved('r2'),
      resolved('r7'),
      resolved('r8', 'profile'),
      { type: 'session.exclusion_changed', excluded: true },
      { type: 'session.stop_requested', deadline_at: 99_000 },
      { type: 'session.recovered', attachment: 'detached', pid: 7, pid_start_time: '1', resumed: false },
      { type: 'session.recovered', attachment: 'attached', pid: 8, pid_start_time: '2', resumed: true },
      { type: 'session.exited', code: 1, signal: null, reason: 'exited' },
      { type: 'session.held', reason: 'budget', detail: 'spent' },
      { type: 'session.released', by: 'user' },
      { type: 'session.loop_detected', pattern: 'repeated_call', count: 3, since: 1, signature: 's', summary: 'sum', evidence: 'e', cooldown_until: 50_000, escalate_after: 2 },
      { type: 'session.usage', turn: 1, model: 'm', input_tokens: 1, output_tokens: 2, cache_read_tokens: 3, cache_write_tokens: 4, cost_usd: 0.5, cost_estimated: false },
      { type: 'session.budget_set', budget: { usd: 5 } },
      { type: 'session.budget_warning', scope: 'session', unit: 'usd', used: 4, limit: 5 },
      { type: 'session.budget_exceeded', scope: 'session', unit: 'usd', used: 5, limit: 5 },
      { type: 'session.rate_limited', status: 'rejected', resets_at: 70_000, limit_type: 'five_hour' },
      { type: 'session.external_run', pid: 9, pid_start_time: '3' },
      { type: 'session.external_activity', activity: 'tool', tool: 'Bash' },
      { type: 'session.worktree_created', path: '/wt/a', branch: 'b', base_ref: 'main', base_sha: 'abc', base_branch: 'main', repo: '/r', reused: 'none', setup: null, copy: [] },
      { type: 'session.worktree_missing' },
    ];
    let taken = 0;
    for (const snapshot of snapshots) {
      for (const e of events) {
        const event = { ...e, at: clock.advance(1) } as SessionEvent;
        const [expected] = transition(sessionMachine, snapshot, event);
        const next = nextSnapshot(snapshot, event);
        const where = `${e.type} in ${stateOf(snapshot)}`;
        expect([where, accepts(snapshot, event)]).toEqual([where, snapshot.can(event)]);
        if (!snapshot.can(event)) {
          expect([where, next]).toEqual([where, null]);
          continue;
        }
        taken++;
        expect([where, next && stateOf(next), next?.context]).toEqual([where, stateOf(expected), expected.context]);
        // What the fast path hands on is a snapshot xstate itself takes the next step from.
        const after = { ...e, at: clock.advance(1) } as SessionEvent;
        if (next && next.can(after)) expect(transition(sessionMachine, next, after)[0].context).toEqual(nextSnapshot(next, after)?.context);
      }
    }
    expect(taken).toBeGreaterThan(snapshots.length * 10);
  });

  it('given a working session, when asked where events lead, then the state each leads to, its own for a report, and null for what it does not take', () => {
    const working = apply(createSession(input()), simulatedClock(), started);
    expect(nextState(working, { type: 'session.blocked', at: 5, reason: 'no key' })).toBe('pending_handling');
    expect(nextState(working, { type: 'session.progress', at: 5, status: 'working', message: null })).toBe('working');
    expect(nextState(working, { type: 'session.started', at: 5, pid: 1, pid_start_time: null, idle: false })).toBeNull();
    expect(accepts(working, { type: 'session.started', at: 5, pid: 1, pid_start_time: null, idle: false })).toBe(false);
  });

  it('given a session waiting, when what it waits on changes within the same state, then its state_since stays and its attention starts again then', () => {
    const clock = simulatedClock();
    let s = apply(createSession(input()), clock, started, { type: 'session.turn_ended', result: 'first' });
    expect([stateOf(s), s.context.state_since, attentionSince(s.context)]).toEqual(['pending_handling', 1_000, 1_000]);
    // A second turn result, a new blocked reason: the state keeps its start, what it waits on is new.
    clock.advance(5_000);
    s = apply(s, clock, { type: 'session.turn_ended', result: 'second' });
    expect([s.context.state_since, attentionSince(s.context)]).toEqual([1_000, 6_000]);
    clock.advance(1_000);
    s = apply(s, clock, { type: 'session.blocked', reason: 'no key' });
    expect([s.context.state_since, attentionSince(s.context)]).toEqual([1_000, 7_000]);
    // A new question, a request queued behind another: the same.
    clock.advance(1_000);
    s = apply(s, clock, { type: 'session.asked_human', question: 'which db?' });
    expect([stateOf(s), s.context.state_since, attentionSince(s.context)]).toEqual(['pending_decision', 8_000, 8_000]);
    clock.advance(1_000);
    s = apply(s, clock, { type: 'session.asked_human', question: 'and which port?' });
    expect(attentionSince(s.context)).toBe(9_000);
    clock.advance(1_000);
    s = apply(s, clock, { type: 'session.permission_requested', request_id: 'r1', tool: 'Bash', input: {} });
    clock.advance(1_000);
    s = apply(s, clock, { type: 'session.permission_requested', request_id: 'r2', tool: 'Edit', input: {} });
    expect([stateOf(s), s.context.state_since, attentionSince(s.context)]).toEqual(['pending_authorization', 10_000, 11_000]);
    // Progress changes nothing it waits on.
    clock.advance(1_000);
    expect(attentionSince(apply(s, clock, { type: 'session.progress', status: 'working', message: null }).context)).toBe(11_000);
  });

  it('given a snapshot written before waiting_since was kept, then what it waits on began with its state', () => {
    const s = apply(createSession(input()), simulatedClock(3_000), started);
    const { waiting_since: _dropped, ...old } = storeSession(s).context;
    const restored = restoreSession({ value: 'working', context: old as SessionSnapshot['context'] });
    expect(restored.context.waiting_since).toBe(s.context.state_since);
  });

  it('given a new session, it is starting since its creation', () => {
    const s = createSession(input());
    expect(stateOf(s)).toBe('starting');
    expect(s.context).toMatchObject({ state_since: 1_000, pid: null, attachment: 'none', excluded: false });
  });

  it('when the worker starts, it is working with its pid; an idle runtime starts pending_handling', () => {
    const clock = simulatedClock(2_000);
    const s = apply(createSession(input()), clock, started);
    expect(stateOf(s)).toBe('working');
    expect(s.context).toMatchObject({ pid: 42, pid_start_time: '777', attachment: 'attached', state_since: 2_000 });
    const idle = apply(createSession(input()), clock, { ...started, idle: true } as Ev);
    expect(stateOf(idle)).toBe('pending_handling');
  });

  it('given starting, rejects worker reports until the worker is started', () => {
    const s = createSession(input());
    expect(nextSnapshot(s, { type: 'session.turn_ended', at: 1, result: null })).toBeNull();
    expect(nextSnapshot(s, { type: 'session.message_dispatched', at: 1, text: 'x' })).toBeNull();
  });

  it('when a turn ends, is pending_handling; a dispatched message makes it working again', () => {
    const clock = simulatedClock();
    let s = apply(createSession(input()), clock, started);
    clock.advance(500);
    s = apply(s, clock, { type: 'session.turn_ended', result: 'done' });
    expect(stateOf(s)).toBe('pending_handling');
    expect(s.context.state_since).toBe(1_500);
    clock.advance(500);
    s = apply(s, clock, { type: 'session.message_dispatched', text: 'next' });
    expect(stateOf(s)).toBe('working');
    expect(s.context.state_since).toBe(2_000);
  });

  it('given working on a message that started the next turn, when the end of the turn before it is applied late, then it stays working', () => {
    const clock = simulatedClock();
    let s = apply(createSession(input()), clock, started);
    clock.advance(500);
    s = apply(s, clock, { type: 'session.message_dispatched', text: 'next' });
    clock.advance(500);
    s = apply(s, clock, { type: 'session.turn_ended', result: 'first answer', superseded: true });
    expect(stateOf(s)).toBe('working');
    expect(s.context).toMatchObject({ state_since: 1_000, updated_at: 2_000 });
    s = apply(s, clock, { type: 'session.turn_ended', result: 'second answer' });
    expect(stateOf(s)).toBe('pending_handling');
  });

  it('keeps the latest turn result, superseded or not, and none from a turn that reported none', () => {
    // Given a started session
    const clock = simulatedClock();
    let s = apply(createSession(input()), clock, started);
    expect(s.context.last_result).toBeNull();
    // When turns end with results, the last one with none
    s = apply(s, clock, { type: 'session.message_dispatched', text: 'next' });
    s = apply(s, clock, { type: 'session.turn_ended', result: 'first answer', superseded: true });
    expect(s.context.last_result).toBe('first answer');
    s = apply(s, clock, { type: 'session.turn_ended', result: 'second answer' });
    expect(s.context.last_result).toBe('second answer');
    // Then a snapshot keeps it, and one written before results were kept restores with none
    expect(restoreSession(JSON.parse(JSON.stringify(storeSession(s)))).context.last_result).toBe('second answer');
    const { last_result, ...old } = storeSession(s).context;
    expect(last_result).toBe('second answer');
    expect(restoreSession({ value: 'pending_handling', context: old as typeof s.context }).context.last_result).toBeNull();
    s = apply(s, clock, { type: 'session.message_dispatched', text: 'again' });
    s = apply(s, clock, { type: 'session.turn_ended', result: null });
    expect(s.context.last_result).toBeNull();
  });

  it('when a permission is requested, is pending_authorization with tool and input; only that request resolves it', () => {
    const clock = simulatedClock();
    let s = apply(createSession(input()), clock, started, {
      type: 'session.permission_requested',
      request_id: 'r1',
      tool: 'Bash',
      input: { command: 'ls' },
    });
    expect(stateOf(s)).toBe('pending_authorization');
    expect(s.context.pending).toEqual({ kind: 'permission', request_id: 'r1', tool: 'Bash', input: { command: 'ls' } });
    expect(nextSnapshot(s, { type: 'session.permission_resolved', at: 9, request_id: 'other', decision: 'allow', reason: null })).toBeNull();
    expect(nextSnapshot(s, { type: 'session.message_dispatched', at: 9, text: 'x' })).toBeNull();
    s = apply(s, clock, { type: 'session.permission_resolved', request_id: 'r1', decision: 'allow', reason: null });
    expect(stateOf(s)).toBe('working');
    expect(s.context.pending).toBeNull();
  });

  it('given a permission pending, when more are requested (parallel tool calls), then they queue and each is pending in turn until all are resolved', () => {
    const clock = simulatedClock();
    const ask = (request_id: string): Ev => ({ type: 'session.permission_requested', request_id, tool: 'WebFetch', input: { url: request_id } });
    const resolve = (request_id: string): Ev => ({ type: 'session.permission_resolved', request_id, decision: 'allow', reason: null });
    let s = apply(createSession(input()), clock, started, ask('r1'));
    const since = s.context.state_since;
    clock.advance(10);
    s = apply(s, clock, ask('r2'), ask('r3'));
    expect(stateOf(s)).toBe('pending_authorization');
    expect(s.context.pending).toMatchObject({ kind: 'permission', request_id: 'r1' });
    expect(s.context.queued_permissions.map((p) => p.request_id)).toEqual(['r2', 'r3']);
    // A queued request may be answered first; the current one stays current.
    s = apply(s, clock, resolve('r3'));
    expect(s.context.pending).toMatchObject({ request_id: 'r1' });
    expect(s.context.queued_permissions.map((p) => p.request_id)).toEqual(['r2']);
    s = apply(s, clock, resolve('r1'));
    expect(stateOf(s)).toBe('pending_authorization');
    expect(s.context.state_since).toBe(since);
    expect(s.context.pending).toEqual({ kind: 'permission', request_id: 'r2', tool: 'WebFetch', input: { url: 'r2' } });
    expect(s.context.queued_permissions).toEqual([]);
    expect(nextSnapshot(s, { ...resolve('r1'), at: 99 } as SessionEvent)).toBeNull();
    s = apply(s, clock, resolve('r2'));
    expect(stateOf(s)).toBe('working');
    expect(s.context.pending).toBeNull();
  });

  it('given queued permissions, when the turn ends or the worker exits, then the queue goes with the pending request', () => {
    const clock = simulatedClock();
    const ask = (request_id: string): Ev => ({ type: 'session.permission_requested', request_id, tool: 'Bash', input: {} });
    const queued = apply(createSession(input()), clock, started, ask('r1'), ask('r2'));
    const ended = apply(queued, clock, { type: 'session.turn_ended', result: null });
    expect(ended.context).toMatchObject({ pending: null, queued_permissions: [] });
    const exited = apply(queued, clock, { type: 'session.exited', code: 0, signal: null, reason: 'exited' });
    expect(exited.context).toMatchObject({ pending: null, queued_permissions: [] });
    // A snapshot stored before queues existed restores with an empty one.
    const { queued_permissions, ...old } = storeSession(ended).context;
    expect(queued_permissions).toEqual([]);
    expect(restoreSession({ value: 'pending_handling', context: old as typeof ended.context }).context.queued_permissions).toEqual([]);
  });

  it('when the worker asks the human, is pending_decision with the question; an answer makes it working', () => {
    const clock = simulatedClock();
    let s = apply(createSession(input()), clock, started, { type: 'session.asked_human', question: 'merge?' });
    expect(stateOf(s)).toBe('pending_decision');
    expect(s.context.pending).toEqual({ kind: 'question', question: 'merge?' });
    s = apply(s, clock, { type: 'session.message_dispatched', text: 'yes' });
    expect(stateOf(s)).toBe('working');
  });

  it('when blocked, is pending_handling with the reason; a repeat does not move state_since', () => {
    const clock = simulatedClock();
    let s = apply(createSession(input()), clock, started, { type: 'session.blocked', reason: 'no creds' });
    expect(stateOf(s)).toBe('pending_handling');
    expect(s.context.pending).toEqual({ kind: 'blocked', reason: 'no creds' });
    const since = s.context.state_since;
    clock.advance(10_000);
    s = apply(s, clock, { type: 'session.blocked', reason: 'still' });
    expect(s.context.state_since).toBe(since);
    expect(s.context.updated_at).toBe(since + 10_000);
  });

  it('records progress and context requests without changing state', () => {
    const clock = simulatedClock();
    let s = apply(createSession(input()), clock, started, { type: 'session.progress', status: 'completed', message: 'step 1' });
    s = apply(s, clock, { type: 'session.context_requested', query: 'where is X?' });
    expect(stateOf(s)).toBe('working');
    expect(s.context.last_progress).toEqual({ status: 'completed', message: 'step 1', at: 1_000 });
  });

  it('when the process exits, is exited with code and reason, and then accepts only exclusion changes', () => {
    const clock = simulatedClock();
    let s = apply(createSession(input()), clock, started, { type: 'session.exited', code: 3, signal: null, reason: 'exited' });
    expect(stateOf(s)).toBe('exited');
    expect(s.context).toMatchObject({ exit_code: 3, exit_reason: 'exited', attachment: 'none', pending: null });
    expect(nextSnapshot(s, { type: 'session.progress', at: 2, status: 'working', message: null })).toBeNull();
    expect(nextSnapshot(s, { type: 'session.message_dispatched', at: 2, text: 'x' })).toBeNull();
    expect(nextSnapshot(s, { type: 'session.exited', at: 2, code: 0, signal: null, reason: 'exited' })).toBeNull();
    s = apply(s, clock, { type: 'session.exclusion_changed', excluded: true });
    expect(s.context.excluded).toBe(true);
  });

  it('keeps the stop deadline as a timestamp in context', () => {
    const clock = simulatedClock(5_000);
    const s = apply(createSession(input()), clock, started, { type: 'session.stop_requested', deadline_at: 8_000 });
    expect(s.context.stop_deadline_at).toBe(8_000);
    expect(stateOf(s)).toBe('working');
  });

  it('when recovered detached after a restart, keeps its state; a resumed runtime waits for an instruction', () => {
    const clock = simulatedClock();
    const base = apply(createSession(input()), clock, started, { type: 'session.permission_requested', request_id: 'r', tool: 'Edit', input: {} });
    const detached = apply(base, clock, { type: 'session.recovered', attachment: 'detached', pid: 42, pid_start_time: '777', resumed: false });
    expect(stateOf(detached)).toBe('pending_authorization');
    expect(detached.context.attachment).toBe('detached');
    const resumed = apply(base, clock, { type: 'session.recovered', attachment: 'attached', pid: 43, pid_start_time: '9', resumed: true });
    expect(stateOf(resumed)).toBe('pending_handling');
    expect(resumed.context).toMatchObject({ pid: 43, pending: null });
    const asking = apply(createSession(input()), clock, started, { type: 'session.asked_human', question: 'q' });
    const resumedAsking = apply(asking, clock, { type: 'session.recovered', attachment: 'attached', pid: 43, pid_start_time: '9', resumed: true });
    expect(stateOf(resumedAsking)).toBe('pending_decision');
  });

  it('round-trips through the stored form (journal snapshots)', () => {
    const clock = simulatedClock();
    const s = apply(createSession(input()), clock, started, { type: 'session.asked_human', question: 'q' });
    const restored = restoreSession(JSON.parse(JSON.stringify(storeSession(s))));
    expect(stateOf(restored)).toBe('pending_decision');
    expect(restored.context).toEqual(s.context);
    const next = nextSnapshot(restored, { type: 'session.message_dispatched', at: 2_000, text: 'a' });
    expect(next && stateOf(next)).toBe('working');
  });

  it('given env values (often secrets), the stored form leaves them out and a restore takes them back from outside', () => {
    const s = apply(createSession(input({ env: { API_KEY: 'sk-secret' } })), simulatedClock(), started);
    const stored = JSON.parse(JSON.stringify(storeSession(s)));
    expect(JSON.stringify(stored)).not.toContain('sk-secret');
    expect(restoreSession(stored, { API_KEY: 'sk-secret' }).context).toEqual(s.context);
    // A snapshot written before values were kept outside still restores its own.
    const legacy = { value: 'working' as const, context: { ...s.context } };
    expect(restoreSession(legacy).context.env).toEqual({ API_KEY: 'sk-secret' });
  });
});
