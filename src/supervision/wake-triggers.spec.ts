import { JournalEvent } from '../journal/journal.port';
import { EVIDENCE_MAX_BYTES } from './round-prompt';
import { SessionView } from './session-directory.port';
import { classifySessionEvent } from './wake-triggers';

const SINCE = Date.parse('2026-11-23T00:00:00.000Z');
const view: SessionView = {
  id: 'cs_a',
  alias: 'w1',
  state: 'pending_authorization',
  state_since: SINCE,
  excluded: false,
  active: true,
  recoverable: false,
  last_result: null,
  waiting_on: { kind: 'permission', text: 'Bash', request_id: 'req_1', input: { command: 'ls' } },
  attention_since: SINCE + 5_000,
};
const since = new Date(SINCE + 5_000).toISOString();
const event = (type: string, data: JournalEvent['data']): JournalEvent => ({
  seq: 7,
  stream: 'session-cs_a',
  version: 3,
  type,
  at: '2026-11-23T00:00:00.000Z',
  data,
  meta: { actor: 'runtime', causation_seq: null, correlation_id: null },
  hash: '0'.repeat(64),
});

describe('wake triggers', () => {
  it('given a permission request queued behind another (no state change), then it wakes the brain as 待授权, naming the tool, the request id and its input', () => {
    const input = { url: 'https://example.test/docs', prompt: 'summarise' };
    const what = classifySessionEvent(event('session.permission_requested', { request_id: 'r2', tool: 'WebFetch', input }), () => view);
    expect(what).toEqual({
      kind: 'wake',
      reason: { session_id: 'cs_a', alias: 'w1', trigger: 'pending_authorization', state: 'pending_authorization', message: 'WebFetch', request_id: 'r2', input: JSON.stringify(input), since },
    });
  });

  it('given a permission request whose input is past the bound, then its JSON keeps its head, marked as cut', () => {
    const what = classifySessionEvent(event('session.permission_requested', { request_id: 'r2', tool: 'Write', input: { content: 'x'.repeat(10_000) } }), () => view);
    const input = what?.reason.input ?? '';
    expect(input).toMatch(/\n\[cut: the first 2048 bytes of 10014; the session's output has it all\]$/);
    expect(input.startsWith('{"content":"xxx')).toBe(true);
  });

  it.each([
    ['working', null],
    ['completed', 'progress_completed'],
    ['blocked', 'progress_blocked'],
    ['needs_review', 'progress_needs_review'],
  ])('given report_progress with status %s, then it wakes the brain as %s (the table of what wakes the brain)', (status, trigger) => {
    const what = classifySessionEvent(event('session.progress', { status, message: 'parser done' }), () => ({ ...view, state: 'working' }));
    expect(what).toEqual(trigger === null ? null : { kind: 'wake', reason: { session_id: 'cs_a', alias: 'w1', trigger, state: 'working', message: 'parser done' } });
  });

  it('given a turn that ended with a result, then it wakes the brain as 待处理 with the result as its message, and the state change it caused is not a second reason', () => {
    // Published after the directory applied it: the session is 待处理 and holds the turn's result.
    const after = () => ({ ...view, state: 'pending_handling', last_result: 'All 12 tests pass.', waiting_on: null });
    expect(classifySessionEvent(event('session.turn_ended', { at: 1, result: 'All 12 tests pass.' }), after)).toEqual({
      kind: 'wake',
      reason: { session_id: 'cs_a', alias: 'w1', trigger: 'pending_handling', state: 'pending_handling', message: 'All 12 tests pass.', since },
    });
    expect(classifySessionEvent(event('session.state_changed', { at: 1, from: 'working', to: 'pending_handling', cause: 'session.turn_ended' }), after)).toBeNull();
    // A turn with no result wakes all the same, saying nothing
    expect(classifySessionEvent(event('session.turn_ended', { at: 1, result: null }), after)).toMatchObject({ kind: 'wake', reason: { message: null } });
    // A turn a next one supersedes (the session works on) wakes no one
    expect(classifySessionEvent(event('session.turn_ended', { at: 1, result: 'x', superseded: true }), () => ({ ...view, state: 'working' }))).toBeNull();
  });

  it.each([
    ['a second turn result', 'pending_handling', 'session.turn_ended', { result: 'Now 13 pass.' }, 'pending_handling', 'Now 13 pass.'],
    ['a new blocked reason', 'pending_handling', 'session.blocked', { reason: 'no disk' }, 'notify_blocked', 'no disk'],
    ['a new question', 'pending_decision', 'session.asked_human', { question: 'And the port?' }, 'ask_human', 'And the port?'],
    ['a new permission request, queued', 'pending_authorization', 'session.permission_requested', { request_id: 'r3', tool: 'Edit', input: {} }, 'pending_authorization', 'Edit'],
  ])(
    'given a session that waits already, when %s comes (its state keeps its name, no state change), then it wakes the brain, saying since when',
    (_what, state, type, data, trigger, message) => {
      const request = type === 'session.permission_requested' ? { request_id: 'r3', input: '{}' } : {};
      expect(classifySessionEvent(event(type, { at: 1, ...data }), () => ({ ...view, state }))).toEqual({
        kind: 'wake',
        reason: { session_id: 'cs_a', alias: 'w1', trigger, state, message, since, ...request },
      });
    },
  );

  it('given a turn result past the bound, then the message keeps its head, marked as cut', () => {
    const what = classifySessionEvent(event('session.turn_ended', { at: 1, result: 'é'.repeat(10_000) }), () => ({ ...view, state: 'pending_handling' }));
    const message = what?.reason.message ?? '';
    expect(message).toMatch(/\n\[cut: the first 4096 bytes; read_session_output gives it all\]$/);
    expect(Buffer.byteLength(message.split('\n')[0])).toBeLessThanOrEqual(EVIDENCE_MAX_BYTES);
  });

  it('given a state change caused by a signal that wakes on its own, then only the signal wakes (one reason, not two)', () => {
    const moved = event('session.state_changed', { at: 1, from: 'working', to: 'pending_authorization', cause: 'session.permission_requested' });
    expect(classifySessionEvent(moved, () => view)).toBeNull();
    const recovered = event('session.state_changed', { at: 1, from: 'working', to: 'pending_handling', cause: 'session.recovered' });
    expect(classifySessionEvent(recovered, () => ({ ...view, state: 'pending_handling' }))).toEqual({
      kind: 'wake',
      reason: { session_id: 'cs_a', alias: 'w1', trigger: 'pending_handling', state: 'pending_handling', message: null, since },
    });
  });

  it('given the same request for an excluded session, then nothing wakes', () => {
    const excluded = { ...view, excluded: true };
    expect(classifySessionEvent(event('session.permission_requested', { request_id: 'r2', tool: 'WebFetch', input: {} }), () => excluded)).toBeNull();
  });

  it('given a loop detected in a supervised session, then a loop trigger: Brainstem\'s summary as the message, the worker\'s evidence apart, and what escalation needs', () => {
    const data = { at: 1, pattern: 'repeated_failure', count: 5, since: 0, signature: 'sig', summary: 'the same call failed 5 times', evidence: 'Bash {"command":"make"}\n→ failed', cooldown_until: 2, escalate_after: 3 };
    const what = classifySessionEvent(event('session.loop_detected', data), () => ({ ...view, state: 'working' }));
    expect(what).toEqual({
      kind: 'loop',
      reason: { session_id: 'cs_a', alias: 'w1', trigger: 'loop_repeated_failure', state: 'working', message: 'the same call failed 5 times', evidence: 'Bash {"command":"make"}\n→ failed' },
      pattern: 'repeated_failure',
      signature: 'sig',
      summary: 'the same call failed 5 times',
      escalate_after: 3,
    });
    expect(classifySessionEvent(event('session.loop_detected', data), () => ({ ...view, excluded: true }))).toBeNull();
  });

  it('given a turn past 80% of a budget, then it wakes the brain with budget_warning, in Brainstem\'s words', () => {
    const what = classifySessionEvent(event('session.budget_warning', { at: 1, scope: 'session', unit: 'tokens', used: 8_500, limit: 10_000 }), () => view);
    expect(what).toEqual({ kind: 'wake', reason: expect.objectContaining({ trigger: 'budget_warning', message: 'its session budget of 10,000 tokens: 8,500 tokens used (85%)' }) });
  });

  it('given a budget reached, then it wakes the brain with budget_exceeded', () => {
    const what = classifySessionEvent(event('session.budget_exceeded', { at: 1, scope: 'profile_day', unit: 'usd', used: 5.2, limit: 5 }), () => view);
    expect(what).toEqual({ kind: 'wake', reason: expect.objectContaining({ trigger: 'budget_exceeded', message: expect.stringContaining("its profile's budget for today (UTC) of $5.00") }) });
  });

  it("given a conflict newly predicted with another worktree session or its base, then it wakes the brain in Brainstem's words, the paths as evidence", () => {
    const other = { ...view, id: 'cs_b', alias: 'w2' };
    const lookup = (id: string) => (id === 'cs_b' ? other : view);
    const e = (b: string) => ({ seq: 9, stream: 'worktree-overlaps-local', type: 'worktree.conflict_predicted', at: '2026-12-06T10:00:00.000Z', version: 1, data: { repo: '/r', session_id: view.id, b, files: ['a.ts'], conflicting_paths: ['a.ts', 'b.ts'] }, meta: { actor: 'brainstem', correlation_id: null, causation_seq: null }, hash: '', prev_hash: '' });
    expect(classifySessionEvent(e('cs_b') as never, lookup)).toEqual({
      kind: 'wake',
      reason: expect.objectContaining({ session_id: view.id, trigger: 'conflict_predicted', message: 'merging it and w2 (cs_b) would conflict in 2 paths', evidence: 'a.ts\nb.ts' }),
    });
    expect(classifySessionEvent(e('base') as never, lookup)).toMatchObject({ reason: { message: 'merging it and its base branch as it is now would conflict in 2 paths' } });
  });

  it('given an exit, then it is an exit to check, marked requested when it was a stop someone asked for', () => {
    expect(classifySessionEvent(event('session.exited', { at: 1, code: 1, signal: null, reason: 'exited' }), () => view)).toMatchObject({ kind: 'exit', requested: false, reason: { trigger: 'worker_exited' } });
    expect(classifySessionEvent(event('session.exited', { at: 1, code: null, signal: 'SIGTERM', reason: 'stopped' }), () => view)).toMatchObject({ kind: 'exit', requested: true });
  });

  it('given a rate limit that refuses, or a session parked at its limit, then nothing wakes the brain: it resumes by itself, and the next round says so', () => {
    expect(classifySessionEvent(event('session.rate_limited', { at: 1, status: 'rejected', resets_at: Date.parse('2026-11-23T05:00:00.000Z'), limit_type: 'five_hour' }), () => view)).toBeNull();
    const parked = { at: 1, reason: 'usage_limit', resumes_at: 2, source: 'runtime', limit_type: 'five_hour', attempt: 1, prompt: null };
    expect(classifySessionEvent(event('session.parked', parked), () => view)).toBeNull();
  });
});
