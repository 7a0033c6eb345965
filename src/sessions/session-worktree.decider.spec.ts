import { CreateSession, SessionCommand, SessionDecision, WorktreeFact, decide, evolve } from './session.decider';
import { SessionEvent, SessionFact } from './session.events';
import { SessionSnapshot, stateOf } from './session.machine';
import { SessionWorktree } from './session-worktree';

const T = 9_000;

type When = SessionCommand extends infer C ? (C extends SessionCommand ? Omit<C, 'at'> : never) : never;
type Given = SessionEvent extends infer E ? (E extends SessionEvent ? Omit<E, 'at'> : never) : never;

const worktree: WorktreeFact = {
  path: '/wt/app-1234abcd/w4-fix',
  branch: 'brainstem/w4-fix',
  base_ref: 'main',
  base_sha: 'a'.repeat(40),
  base_branch: 'main',
  repo: '/src/app',
  reused: 'none',
  setup: 'npm ci',
  copy: ['.env'],
  subdir: 'packages/web',
};

const create = (over: Partial<CreateSession> = {}): When => ({
  type: 'create',
  id: 'cs_w',
  alias: 'w4',
  node: 'n1',
  title: 'Fix',
  cwd: '/src/app/packages/web',
  profile: { id: 'coding-assistant', default_cwd: null, deny: [] },
  cwd_is_directory: true,
  runtime: { name: 'command', command: '/usr/bin/node' },
  profile_config: null,
  args: [],
  env: {},
  excluded: false,
  live_sessions: 0,
  max_sessions: 3,
  isolation: 'worktree',
  work_tree: null,
  worktree,
  sandbox: { on: false, reason: 'BRAINSTEM_SANDBOX is off', required: false },
  ...over,
});

const when = (state: SessionSnapshot | null, command: When): SessionDecision => decide({ ...command, at: T } as SessionCommand, state);

function apply(state: SessionSnapshot | null, decision: SessionDecision): SessionSnapshot {
  if ('error' in decision) throw new Error(`refused: ${decision.error.code}`);
  return decision.events.reduce<SessionSnapshot | null>((s, e) => evolve(s, e as SessionFact), state) as SessionSnapshot;
}

const given = (state: SessionSnapshot, ...events: Given[]): SessionSnapshot => events.reduce((s, e) => evolve(s, { ...e, at: T } as SessionEvent), state);

const created = (): SessionSnapshot => apply(null, when(null, create()));
const ready = (): SessionSnapshot => given(created(), { type: 'session.worktree_prepared', ok: true, reason: null });
const exitedReady = (): SessionSnapshot => given(ready(), { type: 'session.started', pid: 1, pid_start_time: 's', idle: false }, { type: 'session.exited', code: 0, signal: null, reason: 'exited' });
const wt = (s: SessionSnapshot): SessionWorktree => s.context.worktree as SessionWorktree;

describe('a session with a worktree, decided', () => {
  it('Given a create with isolation and its worktree, Then the session works in the worktree at the cwd\'s place, and the worktree is recorded with it', () => {
    const d = when(null, create());
    expect('events' in d && d.events.map((e) => e.type)).toEqual(['session.created', 'session.worktree_created']);
    const s = apply(null, d);
    expect([s.context.cwd, s.context.isolation, s.context.work_tree]).toEqual(['/wt/app-1234abcd/w4-fix/packages/web', 'worktree', '/wt/app-1234abcd/w4-fix']);
    expect(wt(s)).toMatchObject({ branch: 'brainstem/w4-fix', base_branch: 'main', state: 'preparing', created_at: T, pending_op: null });
  });

  it('Given a create whose worktree could not be had, Then its refusal; a full node is refused after the worktree is judged', () => {
    const refusal = { code: 'unknown_ref' as const, message: 'base_ref: no commit is named "nope"' };
    expect(when(null, create({ worktree: { refusal } }))).toEqual({ error: refusal });
    expect(when(null, create({ worktree: { refusal }, live_sessions: 3 }))).toEqual({ error: refusal });
    expect(when(null, create({ live_sessions: 3 }))).toMatchObject({ error: { code: 'max_sessions_reached' } });
  });

  it('Given a create without isolation, Then the checkout its cwd is in is its work tree, and no worktree', () => {
    const s = apply(null, when(null, create({ isolation: 'none', worktree: null, work_tree: '/src/app' })));
    expect([s.context.cwd, s.context.work_tree, s.context.worktree]).toEqual(['/src/app/packages/web', '/src/app', null]);
  });

  it('Given the worktree is prepared, Then it is ready; given the preparation failed, Then the session exits as setup_failed with the reason kept', () => {
    expect(wt(ready()).state).toBe('ready');
    const failed = when(created(), { type: 'record_worktree_prepared', ok: false, reason: 'setup `npm ci` exited with code 1' });
    expect(failed).toEqual({
      events: [
        { type: 'session.worktree_prepared', at: T, ok: false, reason: 'setup `npm ci` exited with code 1' },
        { type: 'session.exited', at: T, code: null, signal: null, reason: 'setup_failed' },
      ],
    });
    const s = apply(created(), failed);
    expect([stateOf(s), s.context.exit_reason, wt(s).state, wt(s).prepare_failure]).toEqual(['exited', 'setup_failed', 'failed', 'setup `npm ci` exited with code 1']);
    // A second report of the same preparation records nothing.
    expect(when(s, { type: 'record_worktree_prepared', ok: true, reason: null })).toEqual({ events: [] });
  });

  describe('operations', () => {
    const merge = (op_id = 'op1'): When => ({ type: 'request_worktree_op', op_id, op: 'merge', strategy: 'ff', force: false });
    const discard: When = { type: 'request_worktree_op', op_id: 'op2', op: 'discard', strategy: null, force: false };

    it('are refused, saying why: no worktree, not ready, based on a tag, a live worker for discard, another one under way', () => {
      const plain = apply(null, when(null, create({ isolation: 'none', worktree: null })));
      expect(when(plain, merge())).toMatchObject({ error: { code: 'no_worktree' } });
      expect(when(created(), merge())).toMatchObject({ error: { code: 'worktree_not_ready' } });
      const onTag = given(apply(null, when(null, create({ worktree: { ...worktree, base_ref: 'v1.0', base_branch: null } }))), { type: 'session.worktree_prepared', ok: true, reason: null });
      expect(when(onTag, merge())).toMatchObject({ error: { code: 'no_base_branch', details: { base_ref: 'v1.0' } } });
      expect(when(ready(), discard)).toMatchObject({ error: { code: 'session_live', details: { state: 'starting' } } });
      const busy = apply(ready(), when(ready(), merge()));
      expect(when(busy, merge('op9'))).toMatchObject({ error: { code: 'worktree_busy', details: { op_id: 'op1' } } });
    });

    it('Given a merge requested on a live session, When the owner reports it merged, Then the merge is recorded once', () => {
      const asked = apply(ready(), when(ready(), merge()));
      expect(wt(asked).pending_op).toEqual({ op_id: 'op1', op: 'merge', strategy: 'ff', force: false, at: T });
      const outcome = { ok: true as const, merged: { strategy: 'ff' as const, step: 'fast_forward' as const, into: 'main', commit: 'c'.repeat(40), checkout_updated: true } };
      const done = apply(asked, when(asked, { type: 'record_worktree_op', op_id: 'op1', outcome }));
      expect(wt(done)).toMatchObject({ pending_op: null, merged: { strategy: 'ff', into: 'main', commit: 'c'.repeat(40), at: T }, last_op: { op_id: 'op1', op: 'merge', ok: true } });
      expect(when(done, { type: 'record_worktree_op', op_id: 'op1', outcome })).toEqual({ events: [] });
    });

    it('Given a refused merge (a conflict), Then the failure is recorded with its code and files, and the worktree takes the next operation', () => {
      const asked = apply(ready(), when(ready(), merge()));
      const refusal = { code: 'merge_conflict' as const, message: 'conflicts in shared.txt', details: { files: ['shared.txt'] } };
      const failed = apply(asked, when(asked, { type: 'record_worktree_op', op_id: 'op1', outcome: { ok: false, refusal } }));
      expect(wt(failed).last_op).toEqual({ op_id: 'op1', op: 'merge', ok: false, at: T, code: 'merge_conflict', message: 'conflicts in shared.txt', details: { files: ['shared.txt'] } });
      expect('events' in when(failed, merge('op3'))).toBe(true);
    });

    it('Given an exited session, When discarded, Then the worktree is removed, and nothing more is taken', () => {
      const asked = apply(exitedReady(), when(exitedReady(), discard));
      const gone = apply(asked, when(asked, { type: 'record_worktree_op', op_id: 'op2', outcome: { ok: true, removed: { branch_kept: false } } }));
      expect(wt(gone)).toMatchObject({ state: 'removed', removed: { reason: 'discarded', branch_kept: false, at: T }, last_op: { op_id: 'op2', op: 'discard', ok: true } });
      expect(when(gone, merge('op4'))).toMatchObject({ error: { code: 'worktree_removed' } });
    });
  });

  it('records a cleanup blocked by uncommitted changes once per set of files, a removal by cleanup, and a folder deleted by hand once', () => {
    const s = exitedReady();
    const blocked = apply(s, when(s, { type: 'record_worktree_cleanup', outcome: { blocked: ['notes.txt'] } }));
    expect(wt(blocked).cleanup_blocked).toEqual(['notes.txt']);
    expect(when(blocked, { type: 'record_worktree_cleanup', outcome: { blocked: ['notes.txt'] } })).toEqual({ events: [] });
    const removed = apply(blocked, when(blocked, { type: 'record_worktree_cleanup', outcome: { removed: true, branch_kept: false } }));
    expect(wt(removed)).toMatchObject({ state: 'removed', removed: { reason: 'cleanup' }, cleanup_blocked: null });
    const missing = apply(s, when(s, { type: 'record_worktree_missing' }));
    expect(wt(missing).state).toBe('missing');
    expect(when(missing, { type: 'record_worktree_missing' })).toEqual({ events: [] });
  });
});
