import { CreateSession, SessionCommand, SessionDecision, WorkerSignal, decide, decideRecords, evolve, sessionCwd } from './session.decider';
import { NO_ALIASES, evolveAliases, numberSession } from './session-aliases';
import { SessionEvent, SessionFact, SessionInput } from './session.events';
import { SessionSnapshot, createSession, stateOf } from './session.machine';
import { LoopPattern } from './loops/loop-pattern';

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
type Then = SessionFact extends infer E ? (E extends SessionFact ? Omit<E, 'at'> : never) : never;

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
function when(state: SessionSnapshot | null, command: When): SessionDecision {
  return decide({ ...command, at: T } as SessionCommand, state);
}

/** Then these events (stamped T). */
function thenEvents(decision: SessionDecision, ...events: Then[]): void {
  expect(decision).toEqual({ events: events.map((e) => ({ ...e, at: T })) });
}

/** The deny facts of a request as it arrives: the profile's rules now, and the service's home. */
const deny = (profile_deny: string[] | null = []) => ({ profile_deny, home: '/home/service' });

const resolve = (over: Partial<Extract<When, { type: 'resolve_permission' }>> = {}): When => ({
  type: 'resolve_permission',
  decision: 'allow',
  reason: null,
  profile_deny: [],
  home: '/home/service',
  ...over,
});

describe('session decide/evolve', () => {
  describe('create', () => {
    const create = (over: Partial<CreateSession> = {}): When => ({
      type: 'create',
      id: 'cs_new',
      alias: 'w7',
      node: 'n1',
      title: 'fix the build',
      cwd: '/repo/../work',
      profile: { id: 'coding-assistant', default_cwd: null, deny: ['Bash(rm *)'] },
      cwd_is_directory: true,
      runtime: { name: 'claude-code', command: null },
      profile_config: { args: ['--settings', '/cfg/settings.json'], env: { OPENCODE_CONFIG: '/cfg/opencode.json' } },
      args: ['--verbose'],
      env: { API_KEY: 'k' },
      excluded: false,
      live_sessions: 2,
      max_sessions: 3,
      isolation: 'none',
      work_tree: '/work',
      worktree: null,
      sandbox: { on: false, reason: 'BRAINSTEM_SANDBOX is off', required: false },
      ...over,
    });

    it('Given no session, When a request passes every rule, Then it is created with its alias, resolved cwd, runtime, profile and env', () => {
      thenEvents(when(null, create()), {
        type: 'session.created',
        input: {
          id: 'cs_new',
          alias: 'w7',
          title: 'fix the build',
          runtime: 'claude-code',
          profile_id: 'coding-assistant',
          cwd: '/work',
          command: null,
          args: ['--verbose'],
          profile_args: ['--settings', '/cfg/settings.json'],
          profile_env: { OPENCODE_CONFIG: '/cfg/opencode.json' },
          permission_deny: ['Bash(rm *)'],
          env: { API_KEY: 'k' },
          excluded: false,
          created_at: T,
          node: 'n1',
          isolation: 'none',
          work_tree: '/work',
          sandbox: { on: false, reason: 'BRAINSTEM_SANDBOX is off' },
        },
      });
    });

    const sandboxFacts = {
      session_id: 'cs_new', runtime: 'claude-code', home: '/home/dev', service_home: '/home/dev', env: {}, data_dir: '/data', profiles_dir: '/profiles', worktrees_dir: '/data/worktrees',
      session_config_dir: '/data/session-config/cs_new', service_url: 'http://127.0.0.1:4820', tmp_root: '/tmp', data_dir_entries: [], profile: null, config_urls: [],
    };

    it("Given a machine that sandboxes, When a request passes every rule, Then its policy is journaled with it, made for the worker's own folder", () => {
      const d = when(null, create({ sandbox: { on: true, facts: sandboxFacts } }));
      const input = 'events' in d && d.events[0].type === 'session.created' ? d.events[0].input : null;
      expect(input?.sandbox).toMatchObject({ on: true, policy: { allow_write: expect.arrayContaining(['/work']), deny_write: expect.arrayContaining(['/data', '/profiles']) } });
    });

    it('Given BRAINSTEM_SANDBOX=required on a machine that cannot sandbox, When a request passes every other rule, Then sandbox_unavailable naming why, and nothing', () => {
      expect(when(null, create({ sandbox: { on: false, reason: 'bwrap not found on PATH', required: true } }))).toEqual({
        error: { code: 'sandbox_unavailable', message: 'BRAINSTEM_SANDBOX is required and this worker cannot be sandboxed: bwrap not found on PATH' },
      });
    });

    it("Given a request without a cwd, Then the profile's default_cwd; without either, Then cwd_required", () => {
      const d = when(null, create({ cwd: null, profile: { id: 'p', default_cwd: '/home/dev/app', deny: [] } }));
      expect('events' in d && d.events[0].type === 'session.created' && d.events[0].input.cwd).toBe('/home/dev/app');
      expect(when(null, create({ cwd: null, profile: { id: 'p', default_cwd: '', deny: [] } }))).toEqual({
        error: { code: 'cwd_required', message: 'cwd: required (profile p has no default_cwd)' },
      });
    });

    it('Given a relative cwd, Then cwd_not_absolute naming where it came from', () => {
      expect(when(null, create({ cwd: 'src' }))).toEqual({ error: { code: 'cwd_not_absolute', message: 'cwd: must be an absolute path, not "src"' } });
      expect(when(null, create({ cwd: null, profile: { id: 'p', default_cwd: 'app', deny: [] } }))).toEqual({
        error: { code: 'cwd_not_absolute', message: 'default_cwd of profile p: must be an absolute path, not "app"' },
      });
    });

    it('Given a cwd that is not a directory, Then cwd_not_a_directory, before any runtime is judged', () => {
      expect(when(null, create({ cwd: '/gone', cwd_is_directory: false, runtime: null, profile_config: null }))).toEqual({
        error: { code: 'cwd_not_a_directory', message: 'cwd: /gone does not exist or is not a directory' },
      });
    });

    it('Given the runtime cannot be chosen, Then the refusal the catalog gave', () => {
      const refusal = { code: 'runtime_not_installed' as const, message: 'runtime codex: executable codex is not on PATH' };
      expect(when(null, create({ runtime: { refusal }, profile_config: null }))).toEqual({ error: refusal });
    });

    it('Given a command runtime, Then the resolved command is kept and no profile flags', () => {
      const d = when(null, create({ runtime: { name: 'command', command: '/usr/bin/node' }, profile_config: null }));
      expect('events' in d && d.events[0].type === 'session.created' && d.events[0].input).toMatchObject({ runtime: 'command', command: '/usr/bin/node', profile_args: [] });
    });

    it('Given a profile with lint errors, Then profile_has_errors with the findings', () => {
      const errors = [{ path: 'tools.mcp[0]', message: 'unknown server' }, { path: '', message: 'skill x is missing' }];
      expect(when(null, create({ profile_config: { errors } }))).toEqual({
        error: {
          code: 'profile_has_errors',
          message: 'profile coding-assistant has 2 error(s), so the session was not started: tools.mcp[0]: unknown server; (profile): skill x is missing',
          details: { errors },
        },
      });
    });

    it('Given the node runs as many live sessions as it may, Then max_sessions_reached; one fewer, Then created', () => {
      expect(when(null, create({ live_sessions: 3 }))).toEqual({ error: { code: 'max_sessions_reached', message: 'at most 3 live coding sessions (BRAINSTEM_MAX_SESSIONS)' } });
      expect(when(null, create({ live_sessions: 2 }))).toMatchObject({ events: [{ type: 'session.created' }] });
    });

    it('Given a session with the id already, Then conflict', () => {
      expect(when(given([]), create())).toMatchObject({ error: { code: 'conflict' } });
    });

    it('sessionCwd: the request\'s cwd, normalised, else the default; refused when missing or relative', () => {
      expect(sessionCwd('/a/./b/', { id: 'p', default_cwd: '/d' })).toEqual({ path: '/a/b', source: 'cwd' });
      expect(sessionCwd(null, { id: 'p', default_cwd: '/d' })).toEqual({ path: '/d', source: 'default_cwd of profile p' });
      expect(sessionCwd(null, { id: 'p', default_cwd: null })).toMatchObject({ error: { code: 'cwd_required' } });
    });
  });

  describe('launch', () => {
    const launch = (over: Partial<Extract<When, { type: 'launch' }>> = {}): When => ({
      type: 'launch',
      spawn: { pid: 7, pid_start_time: '9', idle: false },
      prompt: null,
      worker: 'ready',
      ...over,
    });

    it('Given a new session, When its worker started, Then started; a second launch records nothing', () => {
      thenEvents(when(given([]), launch()), { type: 'session.started', pid: 7, pid_start_time: '9', idle: false });
      thenEvents(when(given([started]), launch()));
    });

    it('When it started with a prompt and the worker can take it, Then the prompt is dispatched with the start', () => {
      thenEvents(when(given([]), launch({ prompt: 'hello' })), { type: 'session.started', pid: 7, pid_start_time: '9', idle: false }, { type: 'session.message_dispatched', text: 'hello' });
      // An idle runtime waits for its first instruction: the prompt is that.
      thenEvents(
        when(given([]), launch({ prompt: 'hello', spawn: { pid: 7, pid_start_time: '9', idle: true } })),
        { type: 'session.started', pid: 7, pid_start_time: '9', idle: true },
        { type: 'session.message_dispatched', text: 'hello' },
      );
    });

    it('When the worker cannot take the prompt, or a stop was requested while it started, Then only the start', () => {
      thenEvents(when(given([]), launch({ prompt: 'hello', worker: 'stdin_closed' })), { type: 'session.started', pid: 7, pid_start_time: '9', idle: false });
      thenEvents(when(given([{ type: 'session.stop_requested', deadline_at: 9_000 }]), launch({ prompt: 'hello' })), {
        type: 'session.started',
        pid: 7,
        pid_start_time: '9',
        idle: false,
      });
    });

    it('When nothing ran, Then exited spawn_failed; Given it exited already, Then nothing', () => {
      thenEvents(when(given([]), launch({ spawn: null, prompt: 'hello' })), { type: 'session.exited', code: null, signal: null, reason: 'spawn_failed' });
      thenEvents(when(given([exited]), launch()));
    });

    it('Given no session, Then not_found', () => {
      expect(when(null, launch())).toMatchObject({ error: { code: 'not_found' } });
    });
  });

  describe('decideRecords: what the stream records', () => {
    it('Then each fact is followed by the state change it makes, caused by it; a creation and a fact that keeps the state have none', () => {
      const records = decideRecords({ type: 'launch', at: T, spawn: { pid: 7, pid_start_time: null, idle: true }, prompt: 'go', worker: 'ready' }, given([]));
      expect(records).toEqual({
        events: [
          { type: 'session.started', at: T, pid: 7, pid_start_time: null, idle: true },
          { type: 'session.state_changed', at: T, from: 'starting', to: 'pending_handling', cause: 'session.started' },
          { type: 'session.message_dispatched', at: T, text: 'go' },
          { type: 'session.state_changed', at: T, from: 'pending_handling', to: 'working', cause: 'session.message_dispatched' },
        ],
      });
      expect(decideRecords({ type: 'signal', at: T, signal: { type: 'report_progress', status: 'working' } }, given([started])).events).toHaveLength(1);
    });

    it('Then a refusal records nothing', () => {
      expect(decideRecords({ type: 'request_stop', at: T, grace_ms: 1 }, given([started, exited]))).toMatchObject({ events: [], error: { code: 'session_exited' } });
    });
  });

  describe('aliases (stream `sessions`)', () => {
    it('Given aliases numbered, When a session is numbered, Then the next one; folded, the count moves on, never back', () => {
      expect(numberSession(NO_ALIASES, 'cs_a')).toEqual({ session_id: 'cs_a', alias: 'w1', number: 1 });
      const index = evolveAliases(NO_ALIASES, { type: 'session.alias_assigned', data: { session_id: 'cs_a', alias: 'w5', number: 5 } });
      expect(numberSession(index, 'cs_b')).toEqual({ session_id: 'cs_b', alias: 'w6', number: 6 });
      expect(evolveAliases(index, { type: 'session.alias_assigned', data: { session_id: 'cs_c', alias: 'w2', number: 2 } })).toBe(index);
    });
  });

  describe('dispatch_message', () => {
    const dispatch = (worker: 'ready' | 'detached' | 'stdin_closed' = 'ready'): When => ({ type: 'dispatch_message', text: 'go on', worker });

    it('Given a working or a waiting session, When a message comes for a ready worker, Then it is dispatched', () => {
      thenEvents(when(given([started]), dispatch()), { type: 'session.message_dispatched', text: 'go on' });
      thenEvents(when(given([started, turnEnded]), dispatch()), { type: 'session.message_dispatched', text: 'go on' });
      thenEvents(when(given([started, { type: 'session.asked_human', question: 'which?' }]), dispatch()), { type: 'session.message_dispatched', text: 'go on' });
    });

    it("Given a person's message, When it is dispatched, Then the path it came by is journaled with it (the chat reads an answer from it)", () => {
      const asked = given([started, { type: 'session.asked_human', question: 'which?' }]);
      thenEvents(when(asked, { type: 'dispatch_message', text: 'go on', worker: 'ready', via: 'send_to_session' }), { type: 'session.message_dispatched', text: 'go on', via: 'send_to_session' });
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
        [{ type: 'permission_request', tool: 'Bash', request_id: 'pr_1', deny: deny() }, { type: 'session.permission_requested', request_id: 'pr_1', tool: 'Bash', input: {} }],
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

  describe('a permission request as it arrives', () => {
    const push = { command: 'git push origin main' };
    const denied = (request_id: string, rule: string, from = 'coding-assistant'): Then => ({
      type: 'session.permission_resolved',
      request_id,
      decision: 'deny',
      reason: `profile ${from} denies Bash (rule ${rule}): a profile's deny always wins`,
      by: 'profile',
      rule,
      tool: 'Bash',
      input: push,
    });
    const asSignal = (request_id: string, profileDeny: string[] | null): When => ({
      type: 'signal',
      signal: { type: 'permission_request', tool: 'Bash', input: push, request_id, deny: deny(profileDeny) },
    });
    const asReport = (request_id: string, profileDeny: string[] | null): When => ({ type: 'report_permission_requested', request_id, tool: 'Bash', input: push, deny: deny(profileDeny) });

    it("Given a working session, When a request arrives that its profile's deny matches now, Then it is denied at once with the rule, by the signal and by the runtime alike", () => {
      const s = given([started]);
      thenEvents(when(s, asSignal('pr_1', ['Bash(git push *)'])), denied('pr_1', 'Bash(git push *)'));
      thenEvents(when(s, asReport('r1', ['Bash(git push *)'])), denied('r1', 'Bash(git push *)'));
    });

    it('Given a session that started with a deny rule, When a request it matches arrives (the profile since edited, or unreadable), Then it is denied at once', () => {
      const s = given([started], { permission_deny: ['Bash(git push *)'] });
      thenEvents(when(s, asSignal('pr_1', [])), denied('pr_1', 'Bash(git push *)'));
      thenEvents(when(s, asReport('r1', null)), denied('r1', 'Bash(git push *)'));
    });

    it('Given a request denied at once, Then the session never waits on it: its state, what it waits on and its queue stay as they were', () => {
      const working = given([started]);
      const d = decideRecords({ ...asReport('r1', ['Bash(git push *)']), at: T } as SessionCommand, working);
      // No state change is recorded: the session never was pending_authorization.
      expect(d.events.map((e) => e.type)).toEqual(['session.permission_resolved']);
      const after = evolve(working, d.events[0] as SessionFact);
      expect([stateOf(after), after.context.pending, after.context.state_since]).toEqual(['working', null, working.context.state_since]);
      // Behind another request: not queued either.
      const asking = given([started, permission('r0')]);
      const behind = evolve(asking, { ...(denied('r2', 'Bash(git push *)') as SessionEvent), at: T });
      expect([stateOf(behind), behind.context.pending, behind.context.queued_permissions]).toEqual(['pending_authorization', asking.context.pending, []]);
    });

    it('Given no rule matches, or the profile cannot be read and the session started with none, Then the request is pending, to be answered', () => {
      const s = given([started]);
      const pending: Then = { type: 'session.permission_requested', request_id: 'pr_1', tool: 'Bash', input: push };
      thenEvents(when(s, asSignal('pr_1', ['Bash(rm *)'])), pending);
      thenEvents(when(s, asSignal('pr_1', null)), pending);
      // A session without a profile has no deny rules.
      thenEvents(when(given([started], { profile_id: null, permission_deny: ['Bash(git push *)'] }), asSignal('pr_1', [])), pending);
    });

    it('Given a worker not started, Then a request denied at once is refused as any state-changing signal, and a report records nothing', () => {
      const s = given([]);
      expect(when(s, asSignal('pr_1', ['Bash(git push *)']))).toMatchObject({ error: { code: 'session_not_started' } });
      thenEvents(when(s, asReport('r1', ['Bash(git push *)'])));
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
      thenEvents(when(given([started]), { type: 'request_stop', grace_ms: 10_000 }), { type: 'session.stop_requested', deadline_at: T + 10_000 });
      thenEvents(when(given([started, stopRequested]), { type: 'request_stop', grace_ms: 10_000 }));
      expect(when(given([started, exited]), { type: 'request_stop', grace_ms: 10_000 })).toMatchObject({ error: { code: 'session_exited' } });
    });
  });

  describe('hold and release', () => {
    const heldForLoop: Given = { type: 'session.held', reason: 'loop', detail: 'Bash(npm test) failed 5 times' };
    const hold: When = { type: 'hold', reason: 'budget', detail: '10,000 tokens reached' };

    it('Given a live session, When it is held, Then held, in the state it was in', () => {
      const s = given([started, turnEnded]);
      thenEvents(when(s, hold), { type: 'session.held', reason: 'budget', detail: '10,000 tokens reached' });
      const after = evolve(s, { type: 'session.held', at: T, reason: 'budget', detail: '10,000 tokens reached' });
      expect(stateOf(after)).toBe('pending_handling');
      expect(after.context.held).toEqual({ reason: 'budget', detail: '10,000 tokens reached', since: T });
    });

    it('Given a held session, When it is held again, Then nothing: the first hold stands', () => {
      thenEvents(when(given([started, heldForLoop]), hold));
    });

    it('Given a held session, When a message comes, Then session_held naming why; a deny still goes through, an allow does not', () => {
      const s = given([started, heldForLoop]);
      expect(when(s, { type: 'dispatch_message', text: 'go on', worker: 'ready' })).toEqual({
        error: {
          code: 'session_held',
          message: 'session w1 is held for a loop that persisted (Bash(npm test) failed 5 times): takes no more messages until the user releases it',
          details: { reason: 'loop' },
        },
      });
      const asking = given([started, heldForLoop, permission('r1')]);
      expect(when(asking, resolve())).toMatchObject({ error: { code: 'session_held' } });
      thenEvents(when(asking, resolve({ decision: 'deny' })), { type: 'session.permission_resolved', request_id: 'r1', decision: 'deny', reason: null });
    });

    it('Given a held session, When it is released, Then released, and messages go through again; Given one not held, Then nothing', () => {
      const s = given([started, turnEnded, heldForLoop]);
      thenEvents(when(s, { type: 'release', by: 'user' }), { type: 'session.released', by: 'user' });
      const released = evolve(s, { type: 'session.released', at: T, by: 'user' });
      expect(released.context.held).toBeNull();
      thenEvents(when(released, { type: 'dispatch_message', text: 'go on', worker: 'ready' }), { type: 'session.message_dispatched', text: 'go on' });
      thenEvents(when(given([started]), { type: 'release', by: 'user' }));
    });

    it('Given an exited session, Then a hold records nothing, and the exit ended any hold', () => {
      thenEvents(when(given([started, exited]), hold));
      expect(given([started, heldForLoop, exited]).context.held).toBeNull();
    });
  });

  describe('loops', () => {
    const detection: { pattern: LoopPattern; count: number; since: number; signature: string; summary: string; evidence: string } = { pattern: 'repeated_call', count: 5, since: 3_000, signature: 'sig-1', summary: 'the same tool call with the same arguments 5 times in a row', evidence: '5 × Bash {"command":"npm test"}' };
    const reportLoop = (over: Partial<typeof detection> = {}): When => ({ type: 'report_loop', detection: { ...detection, ...over }, cooldown_s: 300, escalate_after: 3 });
    const loopDetected = (over: Partial<typeof detection> = {}): Extract<Given, { type: 'session.loop_detected' }> => ({ type: 'session.loop_detected', ...detection, ...over, cooldown_until: T + 300_000, escalate_after: 3 });

    it('Given a working session, When its detector reports a loop, Then session.loop_detected with the cooldown end and the escalation threshold', () => {
      thenEvents(when(given([started]), reportLoop()), loopDetected());
    });

    it('Given a loop detected, Then the session shows it and its pattern cools down until the cooldown end', () => {
      const s = evolve(given([started]), { ...loopDetected(), at: T } as SessionEvent);
      expect(s.context.loop).toEqual({ ...detection, at: T, until: T + 300_000 });
      expect(s.context.loop_cooldowns).toEqual({ repeated_call: T + 300_000 });
      expect(stateOf(s)).toBe('working');
    });

    it('Given the pattern cooling down, When the same pattern is reported again, Then nothing; When another pattern is, Then it is journaled', () => {
      const cooling = given([started, { ...loopDetected(), cooldown_until: T + 1 }]);
      thenEvents(when(cooling, reportLoop({ count: 9 })));
      thenEvents(when(cooling, reportLoop({ pattern: 'repeated_failure' })), loopDetected({ pattern: 'repeated_failure' }));
    });

    it('Given the cooldown over, When the loop is reported again, Then it is journaled again', () => {
      thenEvents(when(given([started, { ...loopDetected(), cooldown_until: T }]), reportLoop({ count: 40 })), loopDetected({ count: 40 }));
    });

    it('Given an exited session, When a loop is reported, Then nothing', () => {
      thenEvents(when(given([started, exited]), reportLoop()));
    });

    it("Given a profile with loop thresholds, When a session is created with it, Then they are journaled with the session's input", () => {
      const d = decide({ type: 'create', at: T, id: 'cs_l', alias: 'w2', node: 'n1', title: '', cwd: '/repo', profile: { id: 'p', default_cwd: null, deny: [], loops: { repeated_call: 8 } }, cwd_is_directory: true, runtime: { name: 'codex', command: null }, profile_config: null, args: [], env: {}, excluded: false, live_sessions: 0, max_sessions: 3, isolation: 'none', work_tree: null, worktree: null, sandbox: { on: false, reason: 'off', required: false } }, null);
      expect('events' in d && d.events[0].type === 'session.created' && d.events[0].input.loops).toEqual({ repeated_call: 8 });
    });
  });

  describe('what the service and runtimes report', () => {

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
      thenEvents(when(s, { type: 'report_permission_requested', request_id: 'r1', tool: 'Edit', input: { file_path: '/repo/a' }, deny: deny() }), {
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
        { type: 'report_permission_requested', request_id: 'r', tool: 'Bash', input: {}, deny: deny() },
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

    it('folds a creation into a new session starting at its time; on no session, any other event leaves none', () => {
      const created = evolve(null, { type: 'session.created', at: 1_000, input: input() });
      expect([stateOf(created), created.context.alias, created.context.state_since]).toEqual(['starting', 'w1', 1_000]);
      expect(evolve(null, { type: 'session.started', at: 2_000, pid: 1, pid_start_time: null, idle: false })).toBeNull();
    });
  });
});
