import { UsageSourceEvent, emptyUsageState, foldUsage, usageRows, dayTotals, profileDayTotals } from './usage.projection';

const DAY1 = Date.parse('2026-11-20T10:00:00Z');
const DAY2 = Date.parse('2026-11-21T10:00:00Z');
const created = (id: string, profile: string | null): UsageSourceEvent => ({ type: 'session.created', stream: `session-${id}`, at: new Date(DAY1).toISOString(), data: { id, alias: `w${id.slice(3)}`, title: `t ${id}`, runtime: 'claude-code', profile_id: profile } });
const used = (id: string, at: number, turn: number, tokens: number, cost: number, model = 'm'): UsageSourceEvent => ({
  type: 'session.usage',
  stream: `session-${id}`,
  at: new Date(at).toISOString(),
  data: { at, turn, model, input_tokens: tokens, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: cost, cost_estimated: false },
});
const brain = (at: number, turn: string, cost: number, conversation: string | null = 'conv-1'): UsageSourceEvent => ({
  type: 'brain.usage',
  stream: 'main-brain',
  at: new Date(at).toISOString(),
  data: { turn_id: turn, conversation_id: conversation, runtime: 'claude-code', model: 'm', input_tokens: 10, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: cost, cost_estimated: true },
});

describe('the usage projection', () => {
  const events: UsageSourceEvent[] = [
    created('cs_1', 'p'),
    created('cs_2', 'p'),
    created('cs_3', null),
    used('cs_1', DAY1, 1, 100, 0.5),
    // A second model in the same turn: one turn, both counted.
    used('cs_1', DAY1, 1, 50, 0.25, 'haiku'),
    used('cs_1', DAY2, 2, 10, 0.1),
    used('cs_2', DAY2, 1, 1000, 2),
    used('cs_3', DAY1, 1, 7, 0.07),
    brain(DAY2, 'bt_1', 1),
    { type: 'workflow.started', stream: 'workflow-wr_1', at: new Date(DAY1).toISOString(), data: { run: { id: 'wr_1', name: 'nightly', session_ids: ['cs_1', 'cs_3'] } } },
  ];
  const state = emptyUsageState();
  beforeAll(() => events.forEach((e) => foldUsage(state, e)));

  it('Given usage of three sessions over two days, When grouped by session, Then each row sums its turns and models', () => {
    const rows = usageRows(state, 'session', { since: null, until: null });
    expect(rows.find((r) => r.session_id === 'cs_1')).toMatchObject({ alias: 'w1', turns: 2, input_tokens: 160, cost_usd: 0.85 });
    expect(rows.map((r) => r.session_id).sort()).toEqual(['cs_1', 'cs_2', 'cs_3']);
  });

  it('Given a range of days, When grouped by session or profile, Then only the days in it count', () => {
    expect(usageRows(state, 'session', { since: '2026-11-21', until: '2026-11-21' }).map((r) => [r.session_id, r.input_tokens])).toEqual([
      ['cs_1', 10],
      ['cs_2', 1000],
    ]);
    expect(usageRows(state, 'profile', { since: null, until: '2026-11-20' })).toEqual([expect.objectContaining({ profile_id: 'p', input_tokens: 150, turns: 1 })]);
    expect(profileDayTotals(state, 'p', '2026-11-21')).toMatchObject({ input_tokens: 1010, cost_usd: 2.1 });
  });

  it('Given the brain spent too, When grouped by day, Then each day has the workers, the brain and their sum', () => {
    const [d1, d2] = usageRows(state, 'day', { since: null, until: null });
    expect(d1).toMatchObject({ day: '2026-11-20', cost_usd: 0.82 });
    expect(d2).toMatchObject({ day: '2026-11-21', cost_usd: 3.1, brain: expect.objectContaining({ cost_usd: 1, turns: 1 }) });
    expect(dayTotals(state, '2026-11-21').all.cost_usd).toBe(3.1);
    expect(usageRows(state, 'brain', { since: null, until: null })).toEqual([expect.objectContaining({ conversation_id: 'conv-1', cost_usd: 1, cost_estimated: true })]);
  });

  it('Given a workflow run naming two sessions, When grouped by workflow, Then it sums them', () => {
    expect(usageRows(state, 'workflow', { since: null, until: null })).toEqual([expect.objectContaining({ run_id: 'wr_1', name: 'nightly', input_tokens: 167, cost_usd: 0.92 })]);
  });

  it('Given a usage event whose numbers are garbage (a hand-edited journal), When folded, Then no total moves', () => {
    const s = emptyUsageState();
    foldUsage(s, created('cs_9', 'p'));
    foldUsage(s, { ...used('cs_9', DAY1, 1, 5, 1), data: { ...(used('cs_9', DAY1, 1, 5, 1).data as object), input_tokens: 'lots' } });
    foldUsage(s, { ...used('cs_9', DAY1, 1, 5, 1), data: { ...(used('cs_9', DAY1, 1, 5, 1).data as object), cost_usd: -3 } });
    expect(usageRows(s, 'session', { since: null, until: null })).toEqual([]);
  });

  it('Given the state as JSON (its snapshot), When folded further, Then it goes on as if never stored', () => {
    const copy = JSON.parse(JSON.stringify(state)) as typeof state;
    foldUsage(copy, used('cs_1', DAY2, 3, 1, 0.01));
    expect(usageRows(copy, 'session', { since: null, until: null }).find((r) => r.session_id === 'cs_1')).toMatchObject({ turns: 3, input_tokens: 161 });
  });
});
