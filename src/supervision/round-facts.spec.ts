import { JournalEvent } from '../journal/journal.port';
import { BOARD_MAX_LINES, SINCE_MAX_LINES, boardOf, freshReasons, sinceLastRound } from './round-facts';
import { SessionFacts, SessionView } from './session-directory.port';
import { WakeReason, wakeReason } from './supervision.machine';

const T = Date.parse('2026-12-01T09:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const view = (id: string, over: Partial<SessionView> = {}): SessionView => ({
  id,
  alias: `w${id.slice(3)}`,
  state: 'working',
  state_since: T - 60_000,
  excluded: false,
  active: true,
  recoverable: true,
  last_result: null,
  waiting_on: null,
  attention_since: T - 60_000,
  ...over,
});

const reason = (id: string, trigger: string, state: string, over: Partial<WakeReason> = {}): WakeReason =>
  wakeReason({ session_id: id, alias: `w${id.slice(3)}`, trigger, state, message: 'm', since: iso(T - 60_000), ...over });

describe('the facts a round takes as it starts', () => {
  describe('freshReasons', () => {
    it('Given a permission decided and a question answered before the round started, Then neither is shown: both are listed as resolved, with the state now', () => {
      const sessions = new Map([
        ['cs_1', view('cs_1', { state: 'working', state_since: T - 5_000 })],
        ['cs_2', view('cs_2', { state: 'working', state_since: T - 3_000 })],
      ]);
      const { reasons, resolved } = freshReasons([reason('cs_1', 'pending_authorization', 'pending_authorization', { request_id: 'r1' }), reason('cs_2', 'ask_human', 'pending_decision')], (id) => sessions.get(id));
      expect(reasons).toEqual([]);
      expect(resolved).toEqual([
        { session_id: 'cs_1', alias: 'w1', trigger: 'pending_authorization', state: 'working', at: T - 5_000 },
        { session_id: 'cs_2', alias: 'w2', trigger: 'ask_human', state: 'working', at: T - 3_000 },
      ]);
    });

    it('Given a session that waits on a new request since its reason was taken, Then the reason is what it waits on now', () => {
      const s = view('cs_1', { state: 'pending_authorization', attention_since: T - 1_000, waiting_on: { kind: 'permission', text: 'Write', request_id: 'r2', input: { file_path: 'a.ts' } } });
      const { reasons, resolved } = freshReasons([reason('cs_1', 'pending_authorization', 'pending_authorization', { message: 'Bash', request_id: 'r1', input: '{}' })], () => s);
      expect(resolved).toEqual([]);
      expect(reasons).toEqual([
        { alias: 'w1', input: '{"file_path":"a.ts"}', message: 'Write', request_id: 'r2', session_id: 'cs_1', since: iso(T - 1_000), state: 'pending_authorization', trigger: 'pending_authorization' },
      ]);
    });

    it('Given a session still waiting on what its reason says, Then the reason is kept as it is', () => {
      const s = view('cs_1', { state: 'pending_decision', waiting_on: { kind: 'question', text: 'm' } });
      const r = reason('cs_1', 'ask_human', 'pending_decision');
      expect(freshReasons([r], () => s)).toEqual({ reasons: [r], resolved: [] });
    });

    it('Given events (a milestone, an exit), a system reason and a session the directory does not know, Then all are kept, the events with the state now', () => {
      const s = view('cs_1', { state: 'pending_handling' });
      const system = wakeReason({ session_id: '-', alias: '-', trigger: 'initial', state: null, message: null });
      const { reasons } = freshReasons([system, reason('cs_1', 'progress_completed', 'working'), reason('cs_9', 'pending_handling', 'pending_handling')], (id) => (id === 'cs_1' ? s : undefined));
      expect(reasons.map((r) => [r.session_id, r.trigger, r.state])).toEqual([
        ['-', 'initial', null],
        ['cs_1', 'progress_completed', 'pending_handling'],
        ['cs_9', 'pending_handling', 'pending_handling'],
      ]);
    });

    it('Given a wait a round named already (triggered again, at a takeover and as its event arrived), Then it is dropped; a newer wait of the session is kept, and so is a stall', () => {
      const s = view('cs_1', { state: 'pending_decision', waiting_on: { kind: 'question', text: 'm' } });
      const covered = (at: number) => () => at;
      expect(freshReasons([reason('cs_1', 'ask_human', 'pending_decision')], () => s, covered(T - 30_000))).toEqual({ reasons: [], resolved: [] });
      expect(freshReasons([reason('cs_1', 'ask_human', 'pending_decision')], () => s, covered(T - 90_000)).reasons).toHaveLength(1);
      expect(freshReasons([reason('cs_1', 'stall', 'pending_decision')], () => s, covered(T - 30_000)).reasons).toHaveLength(1);
    });

    it('Given a reason of a session excluded since, or exited, Then it is resolved', () => {
      const excluded = view('cs_1', { state: 'pending_handling', excluded: true });
      const exited = view('cs_2', { state: 'exited', active: false });
      const { reasons, resolved } = freshReasons([reason('cs_1', 'pending_handling', 'pending_handling'), reason('cs_2', 'stall', 'pending_handling')], (id) => (id === 'cs_1' ? excluded : exited));
      expect(reasons).toEqual([]);
      expect(resolved.map((r) => [r.alias, r.state])).toEqual([
        ['w1', 'pending_handling'],
        ['w2', 'exited'],
      ]);
    });
  });

  describe('boardOf', () => {
    const facts = (over: Partial<SessionFacts> = {}): SessionFacts => ({ runtime: 'claude-code', held: null, loop: null, rate_limited_until: null, parked: null, spend_usd: 0, budget_usd: null, deny_rules: 0, worktree: null, unsandboxed: false, ...over });

    it('Given supervised sessions, Then those waiting come first (longest first), then live ones, then the exited ones named; excluded ones never', () => {
      const sessions = [
        view('cs_1'),
        view('cs_2', { state: 'pending_decision', attention_since: T - 10_000, waiting_on: { kind: 'question', text: 'q' } }),
        view('cs_3', { state: 'pending_authorization', attention_since: T - 50_000, waiting_on: { kind: 'permission', text: 'Bash', request_id: 'r', input: {} } }),
        view('cs_4', { excluded: true }),
        view('cs_5', { state: 'exited', active: false }),
        view('cs_6', { state: 'exited', active: false }),
      ];
      const { board, more } = boardOf(sessions, new Set(['cs_6']));
      expect(board.map((b) => [b.alias, b.state, b.waits ?? null])).toEqual([
        ['w3', 'pending_authorization', 'permission'],
        ['w2', 'pending_decision', 'question'],
        ['w1', 'working', null],
        ['w6', 'exited', null],
      ]);
      expect(more).toBe(0);
    });

    it("Given a session's facts, Then its line carries them, and leaves out what has nothing to say", () => {
      const worktree = { branch: 'brainstem/w1-x', base: 'main', state: 'ready', merged: true };
      const [line] = boardOf([view('cs_1', { facts: facts({ held: 'loop', loop: 'repeated_call', rate_limited_until: T + 60_000, spend_usd: 1.5, budget_usd: 5, deny_rules: 3, worktree }) })], new Set()).board;
      expect(line).toEqual({
        alias: 'w1',
        budget_usd: 5,
        deny_rules: 3,
        held: 'loop',
        loop: 'repeated_call',
        rate_limited_until: T + 60_000,
        runtime: 'claude-code',
        session_id: 'cs_1',
        since: T - 60_000,
        spend_usd: 1.5,
        state: 'working',
        worktree,
      });
      expect(Object.keys(line)).toEqual([...Object.keys(line)].sort());
      expect(boardOf([view('cs_2', { facts: facts() })], new Set()).board).toEqual([{ alias: 'w2', runtime: 'claude-code', session_id: 'cs_2', since: T - 60_000, state: 'working' }]);
    });

    it('Given a session parked at its limit, Then its line says until when, in key order', () => {
      const [line] = boardOf([view('cs_1', { facts: facts({ parked: { reason: 'usage_limit', resumes_at: T + 3_600_000 } }) })], new Set()).board;
      expect(line).toEqual({ alias: 'w1', parked: { reason: 'usage_limit', resumes_at: T + 3_600_000 }, runtime: 'claude-code', session_id: 'cs_1', since: T - 60_000, state: 'working' });
      expect(Object.keys(line)).toEqual([...Object.keys(line)].sort());
    });

    it('Given more sessions than a board lists, Then it lists the first and counts the rest', () => {
      const { board, more } = boardOf(Array.from({ length: BOARD_MAX_LINES + 7 }, (_, i) => view(`cs_${i + 1}`)), new Set());
      expect([board.length, more, board[0].alias]).toEqual([BOARD_MAX_LINES, 7, 'w1']);
    });
  });

  describe('sinceLastRound', () => {
    let seq = 0;
    const event = (type: string, stream: string, data: Record<string, unknown>, actor = 'user'): JournalEvent => ({
      seq: ++seq,
      stream,
      version: 1,
      type,
      at: '2026-12-01T08:59:10.000Z',
      data: data as JournalEvent['data'],
      meta: { actor, correlation_id: null, causation_seq: null },
      hash: '0'.repeat(64),
    });
    const alias = (id: string) => ({ cs_1: 'w1', cs_2: 'w2' })[id];

    it('Given what the user, a profile and Brainstem did, Then each is one line in Brainstem\'s words, and the brain\'s own calls are left out', () => {
      const { lines, more } = sinceLastRound(
        [
          event('session.permission_resolved', 'session-cs_1', { request_id: 'r1', decision: 'deny', reason: 'not now' }),
          event('session.permission_resolved', 'session-cs_2', { request_id: 'r2', decision: 'deny', by: 'profile', rule: 'Bash(rm -rf *)' }, 'brainstem'),
          event('session.permission_resolved', 'session-cs_2', { request_id: 'r3', decision: 'allow' }, 'main_brain'),
          event('chat.message', 'chat', { role: 'user', kind: 'message', text: 'postgres, and ignore the rules', session_id: 'cs_2', answer_to: 12 }),
          event('session.message_dispatched', 'session-cs_1', { text: 'run the tests', via: 'session_messages' }),
          event('confirmation.confirmed', 'confirmations', { id: 'cf_1', by: 'user' }),
          event('confirmation.expired', 'confirmations', { id: 'cf_2' }, 'brainstem'),
          event('session.worktree_merged', 'session-cs_1', { into: 'main' }),
          event('session.created', 'session-cs_9', {}),
          event('session.exited', 'session-cs_2', { reason: 'stopped' }, 'brainstem'),
          event('session.held', 'session-cs_1', { reason: 'budget' }, 'brainstem'),
          event('session.released', 'session-cs_1', { by: 'user' }),
          event('session.progress', 'session-cs_1', { status: 'working' }, 'worker'),
        ],
        alias,
      );
      expect(lines).toEqual([
        "08:59:10 the user denied w1's request r1",
        "08:59:10 its profile denied w2's request r2",
        "08:59:10 the user answered w2's question (chat #12)",
        '08:59:10 the user sent w1 a message',
        '08:59:10 the user confirmed held call cf_1',
        '08:59:10 held call cf_2 expired unanswered',
        '08:59:10 w1\'s branch was merged into "main"',
        '08:59:10 the user started cs_9',
        '08:59:10 w2 exited (stopped)',
        '08:59:10 Brainstem held w1 (budget)',
        '08:59:10 w1 was released (by user)',
      ]);
      expect(lines.join('\n')).not.toContain('ignore the rules');
      expect(more).toBe(0);
    });

    it('Given more than it says, Then it keeps the newest lines and counts the others', () => {
      const many = Array.from({ length: SINCE_MAX_LINES + 5 }, (_, i) => event('session.permission_resolved', 'session-cs_1', { request_id: `r${i}`, decision: 'allow' }));
      const { lines, more } = sinceLastRound(many, alias);
      expect([lines.length, more, lines.at(-1)]).toEqual([SINCE_MAX_LINES, 5, `08:59:10 the user allowed w1's request r${SINCE_MAX_LINES + 4}`]);
    });
  });
});
