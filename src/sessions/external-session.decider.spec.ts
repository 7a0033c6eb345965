import { ExternalReport } from './external-session.decider';
import { SessionDecision, decide, decideRecords, evolve } from './session.decider';
import { SessionFact, SessionInput } from './session.events';
import { SessionSnapshot, createSession, stateOf } from './session.machine';

const T = 5_000;

/** An external session as create_external makes it. */
function created(over: Partial<SessionInput> = {}): SessionSnapshot {
  const d = decide(
    {
      type: 'create_external',
      at: 1_000,
      id: 'cs_ext',
      alias: 'w3',
      node: 'n1',
      claude_session_id: '985276aa-caf2-40bd-a1fa-a5320cf1ec08',
      transcript_path: '/home/u/.claude/projects/-repo/985276aa-caf2-40bd-a1fa-a5320cf1ec08.jsonl',
      cwd: '/repo',
      profile: { id: 'coding-assistant', deny: ['Bash(rm -rf *)'] },
      excluded: true,
    },
    null,
  );
  if ('error' in d) throw new Error(d.error.message);
  const [c] = d.events;
  if (c.type !== 'session.created') throw new Error('not a creation');
  return evolve(null, { ...c, input: { ...c.input, ...over } });
}

/** Given these reports, in order (each decided and folded, as the command path does). */
function given(reports: ExternalReport[], state = created()): SessionSnapshot {
  return reports.reduce((s, report, i) => {
    const d = decide({ type: 'report_external', at: 2_000 + i, report }, s);
    if ('error' in d) throw new Error(d.error.message);
    return d.events.reduce<SessionSnapshot>((x, e) => evolve(x, e), s);
  }, state);
}

const when = (state: SessionSnapshot, report: ExternalReport): SessionDecision => decide({ type: 'report_external', at: T, report }, state);
const run = (pid: number | null = 4242, pid_start_time: string | null = '777'): ExternalReport => ({ kind: 'run', pid, pid_start_time });
const factsOf = (d: SessionDecision): Array<Omit<SessionFact, 'at'>> => ('error' in d ? [] : d.events.map(({ at: _at, ...rest }) => rest as Omit<SessionFact, 'at'>));

describe('external sessions: decide and evolve', () => {
  it('Given a claude session reporting first, When it is created, Then it is an external claude-code session bound to its claude session id and transcript, excluded, with its profile deny rules', () => {
    const s = created();
    expect(stateOf(s)).toBe('starting');
    expect(s.context).toMatchObject({
      origin: 'external',
      runtime: 'claude-code',
      title: 'claude in repo',
      command: null,
      excluded: true,
      permission_deny: ['Bash(rm -rf *)'],
      external: { claude_session_id: '985276aa-caf2-40bd-a1fa-a5320cf1ec08', transcript_path: expect.stringContaining('.jsonl') },
    });
  });

  it('Given a relative cwd, When it is created, Then it is refused', () => {
    const d = decide(
      { type: 'create_external', at: 1, id: 'cs_x', alias: 'w1', node: 'n', claude_session_id: 'x', transcript_path: null, cwd: 'repo', profile: { id: 'p', deny: [] }, excluded: true },
      null,
    );
    expect(d).toEqual({ error: { code: 'invalid_input', message: expect.stringContaining('absolute') } });
  });

  it.each<[string, ExternalReport[], string]>([
    ['its claude runs', [run()], 'working'],
    ['a prompt is submitted after a stop', [run(), { kind: 'turn_ended', result: 'done' }, { kind: 'activity', activity: 'prompt', tool: null }], 'working'],
    ['claude stops', [run(), { kind: 'turn_ended', result: 'done' }], 'pending_handling'],
    ['claude asks a permission', [run(), { kind: 'permission', request_id: 'perm_1', tool: 'Bash', input: { command: 'ls' } }], 'pending_authorization'],
    ['a tool runs after a permission answered at claude\'s own prompt', [run(), { kind: 'permission', request_id: 'perm_1', tool: 'Bash', input: {} }, { kind: 'activity', activity: 'tool', tool: 'Bash' }], 'working'],
    ['claude asks its user a question', [run(), { kind: 'question', question: 'Which database?' }], 'pending_decision'],
    ['the session ends', [run(), { kind: 'ended' }], 'exited'],
    ['its process is gone', [run(), { kind: 'gone' }], 'exited'],
  ])('Given %s, Then the state follows the table of states', (_what, reports, state) => {
    expect(stateOf(given(reports))).toBe(state);
  });

  it('Given a session that ended, When a run of its claude reports (a resume), Then it works again, its exit forgotten and the new pid kept', () => {
    const ended = given([run(), { kind: 'gone' }]);
    expect(ended.context.exit_reason).toBe('vanished');
    const resumed = given([run(5151, '999')], ended);
    expect(stateOf(resumed)).toBe('working');
    expect(resumed.context).toMatchObject({ pid: 5151, pid_start_time: '999', exit_reason: null, exit_code: null, attachment: 'attached' });
  });

  it('Given the same process reporting again, When its run is reported, Then nothing is journaled; a new process is', () => {
    const s = given([run()]);
    expect(when(s, run())).toEqual({ events: [] });
    expect(factsOf(when(s, run(4343, '1')))).toEqual([{ type: 'session.external_run', pid: 4343, pid_start_time: '1' }]);
    expect(stateOf(given([run(4343, '1')], s))).toBe('working');
  });

  it('Given a working session, When a tool call is reported, Then nothing is journaled (every tool call reports)', () => {
    expect(when(given([run()]), { kind: 'activity', activity: 'tool', tool: 'Read' })).toEqual({ events: [] });
  });

  it("Given a permission pending, When claude's own permission prompt is reported (a notification), Then no second request is raised; without one pending it raises one", () => {
    const pending = given([run(), { kind: 'permission', request_id: 'perm_1', tool: 'Bash', input: {} }]);
    const prompt: ExternalReport = { kind: 'permission', request_id: 'perm_2', tool: 'Bash', input: { notification: 'needs permission' }, prompt_only: true };
    expect(when(pending, prompt)).toEqual({ events: [] });
    expect(factsOf(when(given([run()]), prompt))).toEqual([{ type: 'session.permission_requested', request_id: 'perm_2', tool: 'Bash', input: { notification: 'needs permission' } }]);
  });

  it('Given an external session, When it is asked to stop, Then it is refused: its claude is the user\'s', () => {
    expect(decide({ type: 'request_stop', at: T, grace_ms: 5000 }, given([run()]))).toEqual({ error: { code: 'session_external', message: expect.stringContaining('did not start') } });
  });

  it('Given no hook waiting, When a message or a permission answer is decided, Then hook_not_waiting is refused; with one waiting they go through', () => {
    const stopped = given([run(), { kind: 'turn_ended', result: null }]);
    expect(decide({ type: 'dispatch_message', at: T, text: 'go on', worker: 'not_waiting' }, stopped)).toEqual({ error: { code: 'hook_not_waiting', message: expect.stringContaining('w3') } });
    expect(factsOf(decide({ type: 'dispatch_message', at: T, text: 'go on', worker: 'ready' }, stopped))).toEqual([{ type: 'session.message_dispatched', text: 'go on' }]);
    const asking = given([run(), { kind: 'permission', request_id: 'perm_1', tool: 'Bash', input: { command: 'ls' } }]);
    const answer = { type: 'resolve_permission' as const, at: T, decision: 'deny' as const, reason: null, profile_deny: [], home: '/h' };
    expect(decide({ ...answer, worker: 'not_waiting' }, asking)).toEqual({ error: { code: 'hook_not_waiting', message: expect.any(String) } });
    expect(factsOf(decide({ ...answer, worker: 'ready' }, asking))).toEqual([{ type: 'session.permission_resolved', request_id: 'perm_1', decision: 'deny', reason: null }]);
  });

  it("Given a permission request the session's profile denies, When it is allowed, Then the deny rule wins", () => {
    const asking = given([run(), { kind: 'permission', request_id: 'perm_1', tool: 'Bash', input: { command: 'rm -rf build' } }]);
    const d = decide({ type: 'resolve_permission', at: T, decision: 'allow', reason: null, profile_deny: [], home: '/h', worker: 'ready' }, asking);
    expect(d).toEqual({ error: { code: 'denied_by_profile', message: expect.stringContaining('Bash(rm -rf *)'), details: expect.objectContaining({ rule: 'Bash(rm -rf *)' }) } });
  });

  it("Given a session of Brainstem's own, When an external report is decided for it, Then it is refused", () => {
    const own = createSession({ id: 'cs_own', alias: 'w1', title: '', runtime: 'command', profile_id: null, cwd: '/r', command: '/bin/true', args: [], env: {}, excluded: false, created_at: 1 });
    expect(when(own, run())).toEqual({ error: { code: 'conflict', message: expect.stringContaining('started by Brainstem') } });
  });

  it('Given reports, When decided as records, Then each state change is journaled after the fact that caused it', () => {
    const d = decideRecords({ type: 'report_external', at: T, report: run() }, created());
    expect(d.events.map((e) => e.type)).toEqual(['session.external_run', 'session.state_changed']);
    expect(d.events[1]).toMatchObject({ from: 'starting', to: 'working', cause: 'session.external_run' });
  });
});
