import { BudgetFacts, decideBudgetCommand, BudgetCommand } from './session-budget';
import { SessionEvent, SessionInput } from './session.events';
import { SessionSnapshot, createSession, nextSnapshot } from './session.machine';
import { emptyTotals } from '../usage/usage.model';

const T = 9_000;
const input = (over: Partial<SessionInput> = {}): SessionInput => ({
  id: 'cs_b',
  alias: 'w1',
  title: 't',
  runtime: 'claude-code',
  profile_id: 'p',
  cwd: '/repo',
  command: null,
  args: [],
  env: {},
  excluded: false,
  created_at: 1_000,
  ...over,
});
const NONE: BudgetFacts = { profile_session: null, profile_day: null, global_day: null };
const turn = (tokens: number, cost_usd = 0) => [{ model: 'm', input_tokens: tokens, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd, cost_estimated: false }];

type Given = SessionEvent extends infer E ? (E extends SessionEvent ? Omit<E, 'at'> : never) : never;
function given(events: Given[], over: Partial<SessionInput> = {}): SessionSnapshot {
  return events.reduce((s, e, i) => nextSnapshot(s, { ...e, at: 2_000 + i } as SessionEvent) ?? s, createSession(input(over)));
}
type When = BudgetCommand extends infer C ? (C extends BudgetCommand ? Omit<C, 'at'> : never) : never;
const when = (s: SessionSnapshot, cmd: When) => decideBudgetCommand(s, { ...cmd, at: T } as BudgetCommand);
const started = { type: 'session.started', pid: 1, pid_start_time: 's', idle: false } as const;
const usage = (turnNo: number, tokens: number) => ({ type: 'session.usage', turn: turnNo, ...turn(tokens)[0] }) as const;

describe('session budgets', () => {
  it('Given no budget, When a turn reports usage, Then it is recorded as turn 1 with nothing else', () => {
    expect(when(given([started]), { type: 'record_usage', entries: turn(500), budgets: NONE })).toEqual([{ type: 'session.usage', at: T, turn: 1, ...turn(500)[0] }]);
  });

  it('Given a budget of 1,000 tokens with 700 used, When a turn of 150 lands, Then a warning is recorded with it', () => {
    const s = given([started, usage(1, 700)], { budget: { tokens: 1000 } });
    expect(when(s, { type: 'record_usage', entries: turn(150), budgets: NONE }).map((e) => e.type)).toEqual(['session.usage', 'session.budget_warning']);
  });

  it('Given 900 of 1,000 tokens used, When the turn that crosses lands, Then the same decision holds the session, naming the budget', () => {
    const s = given([started, usage(1, 900)], { budget: { tokens: 1000 } });
    const events = when(s, { type: 'record_usage', entries: turn(200), budgets: NONE });
    expect(events.map((e) => e.type)).toEqual(['session.usage', 'session.budget_exceeded', 'session.held']);
    expect(events[1]).toMatchObject({ scope: 'session', unit: 'tokens', used: 1100, limit: 1000 });
    expect(events[2]).toMatchObject({ reason: 'budget', detail: 'its session budget of 1,000 tokens: 1,100 tokens used (110%)' });
  });

  it("Given no budget of its own, When its profile's per-session budget is reached, Then that one holds it", () => {
    const s = given([started]);
    expect(when(s, { type: 'record_usage', entries: turn(0, 2), budgets: { ...NONE, profile_session: { usd: 1.5 } } }).map((e) => e.type)).toContain('session.held');
  });

  it("Given the profile's day budget nearly spent by other sessions, When this turn reaches it, Then this session is held for the day's budget", () => {
    const used = { ...emptyTotals(), turns: 3, cost_usd: 9.5 };
    const events = when(given([started]), { type: 'record_usage', entries: turn(10, 1), budgets: { ...NONE, profile_day: { budget: { usd: 10 }, used } } });
    expect(events.find((e) => e.type === 'session.budget_exceeded')).toMatchObject({ scope: 'profile_day', unit: 'usd', limit: 10 });
  });

  it('Given a session held for its budget, When the budget is raised past what it used, Then it is released by the raise', () => {
    const s = given([started, usage(1, 1200), { type: 'session.held', reason: 'budget', detail: 'x' }], { budget: { tokens: 1000 } });
    expect(when(s, { type: 'set_budget', budget: { tokens: 5000 }, budgets: NONE })).toEqual([
      { type: 'session.budget_set', at: T, budget: { tokens: 5000 } },
      { type: 'session.released', at: T, by: 'budget_raised' },
    ]);
    expect(when(s, { type: 'set_budget', budget: { tokens: 1100 }, budgets: NONE }).map((e) => e.type)).toEqual(['session.budget_set']);
  });

  it('Given a session held for a loop, When its budgets are checked with room, Then it stays held: only the user lifts that', () => {
    const s = given([started, { type: 'session.held', reason: 'loop', detail: 'x' }]);
    expect(when(s, { type: 'check_budget', budgets: NONE })).toEqual([]);
  });

  it('Given a budget lowered under what is used, When set, Then the session is held at once', () => {
    const s = given([started, usage(1, 600)]);
    expect(when(s, { type: 'set_budget', budget: { tokens: 500 }, budgets: NONE }).map((e) => e.type)).toEqual(['session.budget_set', 'session.budget_exceeded', 'session.held']);
  });

  it('Given an exited session, When its last turn reports usage, Then only the usage is recorded', () => {
    const s = given([started, { type: 'session.exited', code: 0, signal: null, reason: 'exited' }], { budget: { tokens: 10 } });
    expect(when(s, { type: 'record_usage', entries: turn(500), budgets: NONE }).map((e) => e.type)).toEqual(['session.usage']);
  });

  it('Given a rate limit reported, When the same state comes again, Then nothing new is recorded; a change is', () => {
    const s = given([started, { type: 'session.rate_limited', status: 'rejected', resets_at: 5, limit_type: 'five_hour' }]);
    expect(when(s, { type: 'report_rate_limit', status: 'rejected', resets_at: 5, limit_type: 'five_hour' })).toEqual([]);
    expect(when(s, { type: 'report_rate_limit', status: 'allowed', resets_at: 5, limit_type: 'five_hour' })).toHaveLength(1);
  });
});
