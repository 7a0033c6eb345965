import { SessionCommand, SessionDecision, WorkerSignal, decide, evolve } from './session.decider';
import { SessionEvent, SessionInput } from './session.events';
import { SessionSnapshot, createSession, stateOf } from './session.machine';

const T = 5_000;

const input = (over: Partial<SessionInput> = {}): SessionInput => ({
  id: 'cs_test',
  alias: 'w1',
  title: 't',
  runtime: 'claude-code',
  profile_id: 'coding-assistant',
  cwd: '/repo',
  command: null,
  args: [],
  env: {},
  permission_deny: [],
  excluded: false,
  created_at: 1_000,
  ...over,
});

type Given = SessionEvent extends infer E ? (E extends SessionEvent ? Omit<E, 'at'> : never) : never;
type When = SessionCommand extends infer C ? (C extends SessionCommand ? Omit<C, 'at'> : never) : never;

const started: Given = { type: 'session.started', pid: 42, pid_start_time: '777', idle: false };
const turnEnded: Given = { type: 'session.turn_ended', result: 'done' };
const permission = (request_id: string, command = 'npm test'): Given => ({ type: 'session.permission_requested', request_id, tool: 'Bash', input: { command } });
const stopRequested: Given = { type: 'session.stop_requested', deadline_at: 9_000 };
const exited: Given = { type: 'session.exited', code: 0, signal: null, reason: 'exited' };

/** Given these events (folded by evolve, as replay does), on a session created with `over`. */
function given(events: Given[], over: Partial<SessionInput> = {}): SessionSnapshot {
  return events.reduce((s, e, i) => evolve(s, { ...e, at: 2_000 + i } as SessionEvent), createSession(input(over)));
}

/** When this command, at T. */
function when(state: SessionSnapshot, command: When): SessionDecision {
  return decide({ ...command, at: T } as SessionCommand, state);
}

/** Then these events (stamped T). */
function thenEvents(decision: SessionDecision, ...events: Given[]): void {
  expect(decision).toEqual({ events: events.map((e) => ({ ...e, at: T })) });
}

const resolve = (over: Partial<Extract<When, { type: 'resolve_permission' }>> = {}): When => ({
  type: 'resolve_permission',
  decision: 'allow',
  reason: null,
  profile_deny: [],
  home: '/home/service',
  ...over,
});

describe('session decide/evolve', () => {
  describe('dispatch_message', () => {
    const dispatch = (worker: 'ready' | 'detached' | 'stdin_closed' = 'ready'): When => ({ type: 'dispatch_message', text: 'go on', worker });

    it('Given a working or a waiting session, When a message comes for a ready worker, Then it is dispatched', () => {
      thenEvents(when(given([started]), dispatch()), { type: 'session.message_dispatched', text: 'go on' });
      thenEvents(when(given([started, turnEnded]), dispatch()), { type: 'session.message_dispatched', text: 'go on' });
      thenEvents(when(given([started, { type: 'session.asked_human', question: 'which?' }]), dispatch()), { type: 'session.message_dispatched', text: 'go on' });
    });

    it('Given an exited session, Then session_exited', () => {
      expect(when(given([started, exited]), dispatch())).toEqual({ error: { code: 'session_exited', message: 'session w1 has exited', details: { state: 'exited' } } });
    });

    it('Given a stop requested, Then session_stopping, even for a ready worker', () => {
      expect(when(given([started, stopRequested]), dispatch())).toEqual({ error: { code: 'session_stopping', message: 'session w1 is being stopped: takes no more messages' } });
    });

    it('When the worker is detached or closed its stdin, Then message_not_deliverable naming why', () => {
      expect(when(given([started]), dispatch('detached'))).toEqual({
        error: { code: 'message_not_deliverable', message: 'session w1 cannot receive messages: its worker is detached after a restart', details: { worker: 'detached' } },
      });
      expect(when(given([started]), dispatch('stdin_closed'))).toMatchObject({ error: { code: 'message_not_deliverable', message: 'session w1 cannot receive messages: its worker closed its stdin' } });
    });

    it('Given a pending permission request, Then permission_pending', () => {
      expect(when(given([started, permission('r1')]), dispatch())).toEqual({
        error: { code: 'permission_pending', message: 'session w1 is pending_authorization: resolve the pending permission request first', details: { state: 'pending_authorization' } },
      });
    });

    it('Given a session whose worker has not started, Then session_not_started', () => {
      expect(when(given([]), dispatch())).toMatchObject({ error: { code: 'session_not_started', details: { state: 'starting' } } });
    });
  });

  describe('resolve_permission', () => {
    it('Given a pending request, When it is answered, Then it is resolved; named, a queued one is resolved instead', () => {
      const s = given([started, permission('r1'), permission('r2')]);
      thenEvents(when(s, resolve({ decision: 'deny', reason: 'no' })), { type: 'session.permission_resolved', request_id: 'r1', decision: 'deny', reason: 'no' });
      thenEvents(when(s, resolve({ request_id: 'r2' })), { type: 'session.permission_resolved', request_id: 'r2', decision: 'allow', reason: null });
    });

    it('Given no pending request, or not the one named, Then permission_not_pending', () => {
      expect(when(given([started]), resolve())).toEqual({ error: { code: 'permission_not_pending', message: 'session w1 has no pending permission request' } });
      expect(when(given([started, permission('r1')]), resolve({ request_id: 'r9' }))).toEqual({
        error: { code: 'permission_not_pending', message: 'session w1 has no pending permission request r9', details: { request_id: 'r9' } },
      });
      // Answered already: another decision took it first.
      const answered = given([started, permission('r1'), { type: 'session.permission_resolved', request_id: 'r1', decision: 'deny', reason: null }]);
      expect(when(answered, resolve({ request_id: 'r1' }))).toMatchObject({ error: { code: 'permission_not_pending' } });
    });

    it('Given an exited session, Then session_exited; given a stop requested, Then session_stopping', () => {
      expect(when(given([started, permission('r1'), exited]), resolve())).toMatchObject({ error: { code: 'session_exited' } });
      expect(when(given([started, permission('r1'), stopRequested]), resolve())).toEqual({
        error: { code: 'session_stopping', message: 'session w1 is being stopped: its pending request ends with it' },
      });
    });

    it("When an allow matches the profile's deny rules now, or those the session started with, Then denied_by_profile naming the rule", () => {
      const s = given([started, permission('r1', 'rm -rf build')], { permission_deny: ['Bash(git push *)'] });
      expect(when(s, resolve({ profile_deny: ['Bash(rm *)'] }))).toEqual({
        error: {
          code: 'denied_by_profile',
          message: "profile coding-assistant denies Bash (rule Bash(rm *)): a profile's deny always wins, so w1's request r1 is not allowed",
          details: { profile_id: 'coding-assistant', rule: 'Bash(rm *)', request_id: 'r1' },
        },
      });
      // A profile edited since cannot take away a deny the session started with.
      const push = given([started, permission('r1', 'git push origin main')], { permission_deny: ['Bash(git push *)'] });
      expect(when(push, resolve({ profile_deny: [] }))).toMatchObject({ error: { code: 'denied_by_profile', details: { rule: 'Bash(git push *)' } } });
    });

    it('When the profile cannot be read, Then an allow is denied_by_profile; a deny still goes through', () => {
      const s = given([started, permission('r1')]);
      expect(when(s, resolve({ profile_deny: null }))).toEqual({
        error: { code: 'denied_by_profile', message: 'cannot read profile coding-assistant of w1, so its permission request is not allowed', details: { profile_id: 'coding-assistant' } },
      });
      thenEvents(when(s, resolve({ decision: 'deny', profile_deny: null })), { type: 'session.permission_resolved', request_id: 'r1', decision: 'deny', reason: null });
    });

    it('Given a session without a profile, Then an allow is not judged by rules', () => {
      const s = given([started, permission('r1', 'rm -rf /')], { profile_id: null, permission_deny: ['Bash'] });
      thenEvents(when(s, resolve({ profile_deny: null })), { type: 'session.permission_resolved', request_id: 'r1', decision: 'allow', reason: null });
    });

    it("reads `~/` in a rule as the worker's HOME, else the service's home", () => {
      const read = (path: string): Given => ({ type: 'session.permission_requested', request_id: 'r1', tool: 'Read', input: { file_path: path } });
      const rule = { profile_deny: ['Read(~/.ssh/**)'] };
      expect(when(given([started, read('/home/w/.ssh/id')], { env: { HOME: '/home/w' } }), resolve(rule))).toMatchObject({ error: { code: 'denied_by_profile' } });
      thenEvents(when(given([started, read('/home/service/.ssh/id')], { env: { HOME: '/home/w' } }), resolve(rule)), {
        type: 'session.permission_resolved',
        request_id: 'r1',
        decision: 'allow',
        reason: null,
      });
      expect(when(given([started, read('/home/service/.ssh/id')]), resolve(rule))).toMatchObject({ error: { code: 'denied_by_profile' } });
    });
  });

  describe('signal', () => {
    const signal = (s: WorkerSignal): When => ({ type: 'signal', signal: s });

    it('When a live worker signals, Then each signal is its event', () => {
      const s = given([started]);
      const cases: Array<[WorkerSignal, Given]> = [
        [{ type: 'report_progress', status: 'completed', message: 'half' }, { type: 'session.progress', status: 'completed', message: 'half' }],
        [{ type: 'report_progress', status: 'working' }, { type: 'session.progress', status: 'working', message: null }],
        [{ type: 'notify_blocked', reason: 'no key' }, { type: 'session.blocked', reason: 'no key' }],
        [{ type: 'ask_human', question: 'which db?' }, { type: 'session.asked_human', question: 'which db?' }],
        [{ type: 'request_context', query: 'the spec' }, { type: 'session.context_requested', query: 'the spec' }],
        [{ type: 'turn_ended' }, { type: 'session.turn_ended', result: null }],
        [{ type: 'turn_ended', result: 'ok' }, { type: 'session.turn_ended', result: 'ok' }],
        [{ type: 'permission_request', tool: 'Bash', request_id: 'pr_1' }, { type: 'session.permission_requested', request_id: 'pr_1', tool: 'Bash', input: {} }],
      ];
      for (const [sig, event] of cases) thenEvents(when(s, signal(sig)), event);
    });

    it('Given a worker not started, Then progress is taken, a state-changing signal is session_not_started', () => {
      const s = given([]);
      thenEvents(when(s, signal({ type: 'report_progress', status: 'working' })), { type: 'session.progress', status: 'working', message: null });
      expect(when(s, signal({ type: 'notify_blocked', reason: 'x' }))).toEqual({
        error: { code: 'session_not_started', message: 'session w1 is starting: a notify_blocked signal is not taken before its worker has started', details: { state: 'starting' } },
      });
    });

    it('Given an exited session, Then session_exited', () => {
      expect(when(given([started, exited]), signal({ type: 'report_progress', status: 'working' }))).toMatchObject({ error: { code: 'session_exited' } });
    });
  });

  describe('set_excluded', () => {
    it('When it changes, Then exclusion_changed, also once exited; When it is already so, Then nothing', () => {
      thenEvents(when(given([started]), { type: 'set_excluded', excluded: true }), { type: 'session.exclusion_changed', excluded: true });
      thenEvents(when(given([started, exited]), { type: 'set_excluded', excluded: true }), { type: 'session.exclusion_changed', excluded: true });
      thenEvents(when(given([started]), { type: 'set_excluded', excluded: false }));
    });
  });

  describe('request_stop', () => {
    it('Given a live session, Then stop_requested with its deadline; Given one requested already, Then nothing; Given exited, Then session_exited', () => {
      thenEvents(when(given([started]), { type: 'request_stop', deadline_at: 10_000 }), { type: 'session.stop_requested', deadline_at: 10_000 });
      thenEvents(when(given([started, stopRequested]), { type: 'request_stop', deadline_at: 10_000 }));
      expect(when(given([started, exited]), { type: 'request_stop', deadline_at: 10_000 })).toMatchObject({ error: { code: 'session_exited' } });
    });
  });

  describe('what the service and runtimes report', () => {
    it('record_start: started once; a second start is ignored', () => {
      const start: When = { type: 'record_start', pid: 7, pid_start_time: '9', idle: true };
      thenEvents(when(given([]), start), { type: 'session.started', pid: 7, pid_start_time: '9', idle: true });
      thenEvents(when(given([started]), start));
    });

    it('record_recovery: recovered; record_lost: exited lost_on_restart, or stopped when a stop was requested', () => {
      thenEvents(when(given([started]), { type: 'record_recovery', attachment: 'detached', pid: 42, pid_start_time: '777', resumed: false }), {
        type: 'session.recovered',
        attachment: 'detached',
        pid: 42,
        pid_start_time: '777',
        resumed: false,
      });
      thenEvents(when(given([started]), { type: 'record_lost' }), { type: 'session.exited', code: null, signal: null, reason: 'lost_on_restart' });
      thenEvents(when(given([started, stopRequested]), { type: 'record_lost' }), { type: 'session.exited', code: null, signal: null, reason: 'stopped' });
    });

    it('report_runtime_session, report_turn_ended (superseded or not) and report_permission_requested are their events', () => {
      const s = given([started]);
      thenEvents(when(s, { type: 'report_runtime_session', runtime_session_id: 'abc' }), { type: 'session.runtime_session_assigned', runtime_session_id: 'abc' });
      thenEvents(when(s, { type: 'report_turn_ended', result: 'r', superseded: false }), { type: 'session.turn_ended', result: 'r' });
      thenEvents(when(s, { type: 'report_turn_ended', result: null, superseded: true }), { type: 'session.turn_ended', result: null, superseded: true });
      thenEvents(when(s, { type: 'report_permission_requested', request_id: 'r1', tool: 'Edit', input: { file_path: '/repo/a' } }), {
        type: 'session.permission_requested',
        request_id: 'r1',
        tool: 'Edit',
        input: { file_path: '/repo/a' },
      });
    });

    it('report_exit: the reason is spawn_failed, stopped, vanished (detached), signaled or exited, in that order', () => {
      const exit = (over: Partial<Extract<When, { type: 'report_exit' }>> = {}): When => ({ type: 'report_exit', code: 0, signal: null, spawn_failed: false, ...over });
      const detached: Given = { type: 'session.recovered', attachment: 'detached', pid: 42, pid_start_time: '777', resumed: false };
      const reason = (events: Given[], command: When) => {
        const d = when(given(events), command);
        return 'events' in d ? d.events.map((e) => (e.type === 'session.exited' ? e.reason : e.type)) : d.error.code;
      };
      expect(reason([], exit({ code: null, spawn_failed: true }))).toEqual(['spawn_failed']);
      expect(reason([started, stopRequested], exit({ signal: 'SIGTERM' }))).toEqual(['stopped']);
      expect(reason([started, detached], exit({ code: null }))).toEqual(['vanished']);
      expect(reason([started], exit({ code: null, signal: 'SIGKILL' }))).toEqual(['signaled']);
      expect(reason([started], exit({ code: 3 }))).toEqual(['exited']);
      thenEvents(when(given([started]), exit({ code: 3 })), { type: 'session.exited', code: 3, signal: null, reason: 'exited' });
    });

    it('Given an exited session, Then later reports are ignored', () => {
      const s = given([started, exited]);
      for (const command of [
        { type: 'report_exit', code: 1, signal: null, spawn_failed: false },
        { type: 'report_turn_ended', result: null, superseded: false },
        { type: 'report_runtime_session', runtime_session_id: 'x' },
        { type: 'report_permission_requested', request_id: 'r', tool: 'Bash', input: {} },
        { type: 'record_recovery', attachment: 'attached', pid: 1, pid_start_time: null, resumed: true },
        { type: 'record_lost' },
      ] satisfies When[]) {
        thenEvents(when(s, command));
      }
    });
  });

  describe('evolve', () => {
    it("folds an event through the machine's transitions; one the state does not take leaves it as it was", () => {
      const s = given([started, permission('r1')]);
      expect(stateOf(s)).toBe('pending_authorization');
      expect(s.context.pending).toEqual({ kind: 'permission', request_id: 'r1', tool: 'Bash', input: { command: 'npm test' } });
      const unchanged = evolve(s, { type: 'session.message_dispatched', at: T, text: 'x' });
      expect(unchanged).toBe(s);
    });
  });
});
