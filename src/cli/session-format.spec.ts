import type { SessionStatus } from '../sessions/session.status';
import type { AutonomousView } from '../supervision/supervision.view';
import { ago, dollars, parkedFlag, pendingSummary, sessionDetail, sessionTable, supervisionLine } from './session-format';

const NOW = Date.parse('2026-11-22T21:45:00.000Z');
const session = (s: Partial<SessionStatus>): SessionStatus => ({
  id: 'cs_1',
  alias: 'w1',
  title: 'fix tests',
  runtime: 'claude-code',
  profile_id: 'coding-assistant',
  cwd: '/src/app',
  node: null,
  state: 'working',
  state_label: null,
  state_since: '2026-11-22T21:40:00.000Z',
  excluded: false,
  supervised: true,
  pid: 41234,
  detached: false,
  exit_code: null,
  exit_signal: null,
  exit_reason: null,
  last_progress: null,
  pending: null,
  queued_permissions: [],
  held: null,
  loop: null,
  usage: { turns: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, tokens: 0, cost_usd: 0, cost_estimated: false },
  budget: null,
  rate_limit: null,
  parked: null,
  isolation: 'none',
  work_tree: '/src/app',
  worktree: null,
  warnings: [],
  network: [],
  sandbox: { on: false, policy: null, reason: 'BRAINSTEM_SANDBOX is off' },
  origin: 'brainstem',
  external: null,
  created_at: '2026-11-22T21:38:00.000Z',
  updated_at: '2026-11-22T21:40:00.000Z',
  ...s,
});

describe('sessions as terminal text', () => {
  it('says how long ago in the largest whole unit', () => {
    expect([0, 59, 60, 3599, 3600, 86400 * 3].map((s) => ago(new Date(NOW - s * 1000).toISOString(), NOW))).toEqual(['0s', '59s', '1m', '59m', '1h', '3d']);
  });

  it('says what a session waits for: the command or file of a permission, the question, the block', () => {
    expect(pendingSummary({ kind: 'permission', request_id: 'r1', tool: 'Bash', input: { command: 'npm test' } })).toBe('permission Bash: npm test');
    expect(pendingSummary({ kind: 'permission', request_id: 'r1', tool: 'Write', input: { file_path: 'a.ts', content: 'x' } })).toBe('permission Write: a.ts');
    expect(pendingSummary({ kind: 'permission', request_id: 'r1', tool: 'Mcp', input: { n: 1 } })).toBe('permission Mcp: {"n":1}');
    expect(pendingSummary({ kind: 'question', question: 'Which\ndatabase?' })).toBe('question: Which database?');
    expect(pendingSummary({ kind: 'blocked', reason: 'x'.repeat(200) }, 20)).toBe(`blocked: ${'x'.repeat(10)}…`);
  });

  it('lists sessions in aligned columns, marks the unsandboxed ones, and says when there are none', () => {
    const sandboxed: SessionStatus['sandbox'] = { on: true, policy: null, reason: null };
    const rows = sessionTable(
      [
        session({ sandbox: sandboxed }),
        session({ alias: 'w12', state: 'pending_authorization', state_since: '2026-11-22T21:44:30.000Z', title: 'a\x1b[2Jb', pending: { kind: 'permission', request_id: 'r', tool: 'Bash', input: { command: 'make' } }, sandbox: sandboxed }),
        session({ alias: 'w13' }),
      ],
      NOW,
    );
    expect(rows).toEqual([
      'ALIAS  STATE                  RUNTIME                  SINCE  COST   TITLE      WAITS FOR',
      'w1     working                claude-code              5m     $0.00  fix tests',
      'w12    pending_authorization  claude-code              30s    $0.00  ab         permission Bash: make',
      'w13    working                claude-code UNSANDBOXED  5m     $0.00  fix tests',
    ]);
    expect(sessionTable([], NOW)).toEqual(['no sessions']);
  });

  it('shows one session field by field, with its pending and queued requests and its exit', () => {
    const lines = sessionDetail(
      session({
        state: 'exited',
        exit_code: 7,
        exit_reason: 'exited',
        pending: { kind: 'permission', request_id: 'r1', tool: 'Bash', input: { command: 'make' } },
        queued_permissions: [{ request_id: 'r2', tool: 'Read', input: { file_path: 'x' } }],
      }),
      NOW,
    );
    expect(lines).toContain('waits for   permission r1: Bash {"command":"make"}');
    expect(lines).toContain('queued      permission r2: Read {"file_path":"x"}');
    expect(lines).toContain('exit        exited, code 7');
    expect(lines[0]).toBe('session     w1 (cs_1)');
    expect(lines.some((l) => l.startsWith('started'))).toBe(false);
  });

  it('says a claude session started outside Brainstem is one, with its claude session id', () => {
    const lines = sessionDetail(session({ origin: 'external', external: { claude_session_id: '985276aa', transcript_path: null } }), NOW);
    expect(lines).toContain('started     outside Brainstem: claude session 985276aa');
  });

  it('says what a session spent (estimated with ~), its budget, its worktree, and what holds it or loops', () => {
    expect([0, 0.0042, 1.5].map((d) => dollars(d))).toEqual(['$0.00', '$0.0042', '$1.50']);
    const lines = sessionDetail(
      session({
        usage: { turns: 3, input_tokens: 1000, output_tokens: 200, cache_read_tokens: 0, cache_write_tokens: 0, tokens: 1200, cost_usd: 0.0912, cost_estimated: true },
        budget: { tokens: 5000, usd: 2 },
        held: { reason: 'budget', detail: 'its session budget of $2.00: $2.10 used (105%)', since: '2026-11-22T21:44:00.000Z' },
        loop: { pattern: 'repeated_call', count: 5, summary: 'the same call 5 times', evidence: 'x', since: '2026-11-22T21:40:00.000Z', detected_at: '2026-11-22T21:43:00.000Z', until: '2026-11-22T21:48:00.000Z' },
      }),
      NOW,
    );
    expect(lines).toContain('spent       1200 tokens, ~$0.09 in 3 turn(s); budget 5000 tokens, $2.00');
    expect(lines).toContain('held        budget: its session budget of $2.00: $2.10 used (105%) (1m ago; brainstem release w1)');
    expect(lines).toContain('loop        repeated_call ×5: the same call 5 times (2m ago)');
    expect(sessionTable([session({ held: { reason: 'loop', detail: 'the same call 5 times', since: '2026-11-22T21:44:00.000Z' } })], NOW)[1]).toMatch(/held: the same call 5 times$/);
  });

  describe('a session parked at its limit', () => {
    // Built on the terminal's own clock, so the clock time printed is the same in every time zone.
    const resumesAt = new Date(2026, 10, 23, 4, 10).getTime();
    const parked = (p: Partial<NonNullable<SessionStatus['parked']>> = {}): NonNullable<SessionStatus['parked']> => ({
      reason: 'usage_limit',
      resumes_at: new Date(resumesAt).toISOString(),
      source: 'runtime',
      limit_type: 'five_hour',
      attempt: 1,
      since: new Date(resumesAt - 3 * 3_600_000).toISOString(),
      fallback_session_id: null,
      ...p,
    });

    it('given a parked session with a reset ahead, when flagged, then it says which limit and counts down to the clock time', () => {
      expect(parkedFlag(parked(), resumesAt - 42 * 60_000)).toBe('parked (usage limit) · resumes in 42m (04:10)');
      expect(parkedFlag(parked({ reason: 'rate_limit' }), resumesAt - 45_000)).toBe('parked (rate limit) · resumes in 45s (04:10)');
      // A part of a second left is a second left, never "0s"
      expect(parkedFlag(parked(), resumesAt - 1)).toBe('parked (usage limit) · resumes in 1s (04:10)');
      expect(parkedFlag(parked(), resumesAt - (3 * 60 + 5) * 60_000)).toBe('parked (usage limit) · resumes in 3h 5m (04:10)');
    });

    it('given a reset on another day than now, when flagged, then its date is printed with the time', () => {
      expect(parkedFlag(parked(), resumesAt - 5 * 3_600_000)).toBe('parked (usage limit) · resumes in 5h (2026-11-23 04:10)');
      expect(parkedFlag(parked(), resumesAt - (2 * 24 + 3) * 3_600_000)).toBe('parked (usage limit) · resumes in 2d 3h (2026-11-23 04:10)');
    });

    it('given a session kept parked, when flagged, then it says so, with no countdown', () => {
      expect(parkedFlag(parked({ reason: 'rate_limit', resumes_at: null, source: 'user' }), resumesAt)).toBe('parked (rate limit) · kept parked');
    });

    it('given a session still parked past its time, when flagged, then the resume is due since then', () => {
      expect(parkedFlag(parked(), resumesAt + 2000)).toBe('parked (usage limit) · resume due since 04:10');
    });

    it('given a parked session, when listed and shown, then ls flags it as what it waits for and show adds its limit, attempt and how to resume it', () => {
      const now = resumesAt - 42 * 60_000;
      expect(sessionTable([session({ parked: parked() })], now)[1]).toMatch(/ {2}parked \(usage limit\) · resumes in 42m \(04:10\)$/);
      expect(sessionDetail(session({ parked: parked() }), now)).toContain('limit       parked (usage limit) · resumes in 42m (04:10); five_hour, attempt 1, parked 2h ago (brainstem resume w1)');
      const backoff = sessionDetail(session({ parked: parked({ reason: 'rate_limit', source: 'backoff', limit_type: null, attempt: 3 }) }), now);
      expect(backoff).toContain('limit       parked (rate limit) · resumes in 42m (04:10); attempt 3, a backoff (the runtime named no reset), parked 2h ago (brainstem resume w1)');
    });

    it('given a parked session that is also held, when listed, then the hold is what it waits for (only a release resumes it)', () => {
      const held = session({ parked: parked(), held: { reason: 'budget', detail: 'its budget is spent', since: '2026-11-22T21:44:00.000Z' } });
      expect(sessionTable([held], resumesAt - 60_000)[1]).toMatch(/held: its budget is spent$/);
    });

    it('given a session not parked, when shown, then it has no limit line', () => {
      expect(sessionDetail(session({}), NOW).some((l) => l.startsWith('limit'))).toBe(false);
    });
  });

  it('says whether supervision is on, with its goal and turns, or off and why', () => {
    const on: AutonomousView = { enabled: true, turns_used: 3, max_turns: 60, task_hint: 'ship it', started_by: 'user', closed_reason: null, summary: null, round_in_flight: null, scope: { mode: 'all', include_external: false, supervised: [], excluded: [] }, pending: [] };
    expect(supervisionLine(null)).toBe('off (never turned on)');
    expect(supervisionLine(on)).toBe('on: goal "ship it", 3 of 60 turns used');
    expect(supervisionLine({ ...on, enabled: false, closed_reason: 'max_turns' })).toBe('off (max_turns)');
  });
});
