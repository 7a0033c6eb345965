import { PromptCache } from './prompt-cache';
import { BrainRequest, JournalRecord, RoundRecord, ScenarioInput, percentile, scenarioReport } from './scenario-metrics';

const T0 = Date.parse('2026-12-01T10:00:00Z');
let seq = 0;
const ev = (stream: string, type: string, data: object, atMs: number): JournalRecord => ({ seq: ++seq, stream, type, at: new Date(atMs).toISOString(), data: { at: atMs, ...data } });
const state = (id: string, from: string, to: string, at: number) => ev(`session-${id}`, 'session.state_changed', { from, to }, at);
const reason = (id: string, trigger: string, st: string | null) => ({ session_id: id, alias: 'w1', trigger, state: st, message: null });
const started = (id: string, at: number, reasons: object[]) => ev('supervision', 'round.started', { round: { id, started_at: at, reasons } }, at);
const completed = (id: string, at: number) => ev('supervision', 'round.completed', { round_id: id }, at);
const turnStarted = (round: string, at: number) => ev('main-brain', 'brain.turn_started', { round_id: round, turn_id: 't', chat_seqs: [] }, at);
const usage = (fresh: number, read = 0) => ({ input_tokens: Math.floor(fresh / 2), cache_creation_input_tokens: Math.ceil(fresh / 2), cache_read_input_tokens: read });
const request = (round: string, at: number, tool: string | null, fresh: number, read = 0, session: string | null = null): BrainRequest => ({ at, model: 'claude-sonnet-4-5', round, usage: usage(fresh, read), output_tokens: 10, tool, session, round_prompt: tool !== 'complete_round' });
const input = (journal: JournalRecord[], extra: Partial<ScenarioInput> = {}): ScenarioInput => ({
  journal,
  rounds: [],
  brainRequests: [],
  brainCalls: new Map(),
  prices: () => 0,
  ...extra,
});

describe('the scenario bench metrics', () => {
  beforeEach(() => (seq = 0));

  describe('given a session that waits, a round that says so, and the brain letting it go on', () => {
    const journal = () => [
      state('cs_a', 'working', 'pending_handling', T0),
      started('rd_1', T0 + 300, [reason('cs_a', 'pending_handling', 'pending_handling')]),
      turnStarted('rd_1', T0 + 310),
      state('cs_a', 'pending_handling', 'working', T0 + 900),
      completed('rd_1', T0 + 1000),
    ];
    const brainRequests = [request('rd_1', T0 + 500, 'send_to_session', 2000, 8000, 'cs_a'), request('rd_1', T0 + 700, 'complete_round', 100, 9000)];
    const calls = new Map([['rd_1', [{ tool: 'send_to_session', input: {} }, { tool: 'complete_round', input: {} }]]]);

    it('when reported, then nothing is stale or lost and each latency runs from the trigger', () => {
      const r = scenarioReport(input(journal(), { brainRequests, brainCalls: calls }));
      expect(r).toMatchObject({ rounds: 1, rounds_by_status: { completed: 1 }, stale_facts: 0, nothing_to_act_on: 0, triggers: 1, attention_lost: 0 });
      expect(r.latency.to_round.p50).toBe(300);
      expect(r.latency.to_first_call.p50).toBe(500);
      expect(r.latency.to_going_on.p50).toBe(900);
      expect(r.latency.round_to_delivery.p50).toBe(10);
      expect(r.latency.round_to_api.p50).toBe(200);
    });

    it('when reported, then tokens are summed per round and the cache share is of every input token', () => {
      const r = scenarioReport(input(journal(), { brainRequests, brainCalls: calls }));
      expect(r.fresh_per_round).toEqual({ p50: 2100, p99: 2100, n: 1 });
      expect(r.cache_read_per_round.p50).toBe(17000);
      // Fresh is what was not read: written to the cache or not.
      expect(r.total).toMatchObject({ fresh: 2100, cache_write: 1050, cache_read: 17000, output: 20 });
      expect(r.cache_read_share).toBeCloseTo(17000 / 19100);
    });
  });

  describe('given a worker its model\'s limit parked, resumed by its timer, and a round a limit woke', () => {
    it('when reported, then the parks, the resumes by themselves and the rounds woken are counted; a park kept by the user is not a refusal', () => {
      const journal = [
        ev('session-cs_a', 'session.parked', { source: 'runtime', reason: 'usage_limit' }, T0),
        ev('session-cs_a', 'session.parked', { source: 'user', reason: 'usage_limit' }, T0 + 10),
        ev('session-cs_a', 'session.unparked', { by: 'timer' }, T0 + 3000),
        ev('session-cs_b', 'session.unparked', { by: 'user' }, T0 + 3000),
        started('rd_1', T0 + 300, [reason('cs_a', 'rate_limited', 'working')]),
        completed('rd_1', T0 + 400),
      ];
      expect(scenarioReport(input(journal)).limits).toEqual({ parked: 1, resumed_by_itself: 1, rounds_woken: 1 });
    });
  });

  describe('given a round whose reason says a state the session had already left', () => {
    it('when reported, then it is one stale fact, and the round had nothing to act on', () => {
      const journal = [state('cs_a', 'working', 'pending_handling', T0), state('cs_a', 'pending_handling', 'working', T0 + 100), started('rd_1', T0 + 300, [reason('cs_a', 'pending_handling', 'pending_handling')]), completed('rd_1', T0 + 400)];
      const r = scenarioReport(input(journal, { brainCalls: new Map([['rd_1', [{ tool: 'send_to_session', input: {} }]]]) }));
      expect(r.stale_facts).toBe(1);
      expect(r.stale_examples[0]).toContain('says pending_handling, was working');
      expect(r.nothing_to_act_on).toBe(1);
    });
  });

  describe('given a round where the brain only completed the round', () => {
    it('when reported, then it had nothing to act on', () => {
      const journal = [state('cs_a', 'working', 'pending_handling', T0), started('rd_1', T0 + 300, [reason('cs_a', 'pending_handling', 'pending_handling')]), completed('rd_1', T0 + 400)];
      expect(scenarioReport(input(journal, { brainCalls: new Map([['rd_1', [{ tool: 'complete_round', input: {} }]]]) })).nothing_to_act_on).toBe(1);
    });
  });

  describe('given triggers no completed round covered', () => {
    it('when one session never went on and its only round was interrupted, then its attention was lost; one the person let go on was not', () => {
      const journal = [
        state('cs_a', 'working', 'pending_decision', T0),
        state('cs_b', 'working', 'pending_authorization', T0),
        started('rd_1', T0 + 300, [reason('cs_a', 'ask_human', 'pending_decision')]),
        ev('supervision', 'round.interrupted', { round_id: 'rd_1', reasons: [] }, T0 + 400),
        state('cs_b', 'pending_authorization', 'working', T0 + 500),
      ];
      const r = scenarioReport(input(journal));
      expect(r.triggers).toBe(2);
      expect(r.attention_lost).toBe(1);
      expect(r.lost_examples[0]).toContain('pending_decision of cs_a');
      expect(r.lost_examples[0]).toContain('rd_1 interrupted');
    });

    it('when a loop was detected and no round named the session, then it was lost', () => {
      const journal = [ev('session-cs_a', 'session.loop_detected', { pattern: 'repeated_text' }, T0)];
      expect(scenarioReport(input(journal)).attention_lost).toBe(1);
    });
  });

  describe('given a pending permission on a session a round names', () => {
    const journal = () => [
      ev('session-cs_a', 'session.permission_requested', { request_id: 'perm_1', tool: 'Bash', input: { command: 'npm test' } }, T0),
      state('cs_a', 'working', 'pending_authorization', T0),
      started('rd_1', T0 + 300, [reason('cs_a', 'pending_authorization', 'pending_authorization')]),
    ];
    const round = (prompt: string): RoundRecord[] => [{ id: 'rd_1', status: 'in_flight', prompt, reasons: [] }];

    it('when the prompt names its id and input, then it is shown; when it leaves the id out, it is not', () => {
      expect(scenarioReport(input(journal(), { rounds: round('w1 asks Bash perm_1 {"command":"npm test"}') })).permissions_shown).toBe(1);
      const r = scenarioReport(input(journal(), { rounds: round('w1 asks Bash {"command":"npm test"}') }));
      expect(r).toMatchObject({ permissions_in_rounds: 1, permissions_shown: 0 });
    });

    it('when the facts are counted, then the permission is part of them', () => {
      const without = scenarioReport(input(journal().filter((e) => e.type !== 'session.permission_requested')));
      expect(scenarioReport(input(journal())).facts_per_round.p50).toBeGreaterThan(without.facts_per_round.p50);
    });
  });

  describe('given numbers', () => {
    it('when a percentile is asked, then it is the nearest rank', () => {
      const xs = Array.from({ length: 100 }, (_, i) => i + 1);
      expect([percentile(xs, 50), percentile(xs, 99), percentile([7], 99), percentile([], 50)]).toEqual([50, 99, 7, NaN]);
    });
  });

  it('the cache accounting and the report agree on a conversation (a smoke of the two together)', () => {
    const cache = new PromptCache();
    const system = [{ type: 'text', text: 's'.repeat(8000), cache_control: { type: 'ephemeral' } }];
    const u = cache.account({ system, messages: [{ role: 'user', content: 'hi' }] }, T0);
    const v = cache.account({ system, messages: [{ role: 'user', content: 'ho' }] }, T0 + 1);
    const brainRequests = [{ ...request('rd_1', T0, null, 0), usage: u }, { ...request('rd_2', T0 + 1, null, 0), usage: v }];
    const r = scenarioReport(input([], { brainRequests }));
    expect(r.cache_read_share).toBeCloseTo(v.cache_read_input_tokens / (u.input_tokens + u.cache_creation_input_tokens + v.input_tokens + v.cache_creation_input_tokens + v.cache_read_input_tokens));
  });
});
