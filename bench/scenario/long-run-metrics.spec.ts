import { longRunReport } from './long-run-metrics';
import type { BrainRequest, JournalRecord } from './scenario-metrics';

const request = (round: string, fresh: number, read: number): BrainRequest => ({
  at: 0,
  model: 'm',
  round,
  usage: { input_tokens: 0, cache_creation_input_tokens: fresh, cache_read_input_tokens: read },
  output_tokens: 1,
  tool: null,
  session: null,
  round_prompt: false,
});
const started = (seq: number, reason: string, summary: string | null): JournalRecord => ({ seq, stream: 'main-brain', type: 'brain.conversation_started', at: '2026-12-01T10:00:00Z', data: { runtime: 'claude-code', reason, summary } });
const must = { goal: 'Ship it', question: 'per user or global?', confirmation_id: 'cf_1' };

describe('the long-run metrics', () => {
  describe('given rounds of two requests each', () => {
    it('when reported in windows, then each window gives its rounds\' tokens, summed per round, in the order the brain saw them', () => {
      const requests = ['rd_a', 'rd_b', 'rd_c', 'rd_d'].flatMap((r, i) => [request(r, 100 * (i + 1), 1000), request(r, 0, 1000)]);
      const r = longRunReport([], requests, must, 2);
      expect(r.rounds).toBe(4);
      expect(r.windows).toEqual([
        { from: 1, to: 2, fresh: { p50: 100, p99: 200, n: 2 }, cache_read: { p50: 2000, p99: 2000, n: 2 } },
        { from: 3, to: 4, fresh: { p50: 300, p99: 400, n: 2 }, cache_read: { p50: 2000, p99: 2000, n: 2 } },
      ]);
    });
  });

  describe('given roll-overs whose summaries carry some of what the brain must know', () => {
    it('when reported, then each thing is counted over the context-budget roll-overs only', () => {
      const journal = [
        started(1, 'first', null),
        started(2, 'context_budget', 'Goal: Ship it\nw2 pending_decision'),
        started(3, 'context_budget', 'Goal: Ship it\nw2 asked: per user or global?\nconfirmation cf_1 pending'),
        started(4, 'context_full', 'Goal: Ship it per user or global? cf_1'),
      ];
      const r = longRunReport(journal, [], must);
      expect(r).toMatchObject({ rollovers: 2, carries: { goal: 2, question: 1, confirmation: 1 } });
      expect(r.first_summary).toContain('w2 pending_decision');
    });

    it('when no confirmation was pending, then none is counted', () => {
      expect(longRunReport([started(2, 'context_budget', 'anything')], [], { ...must, confirmation_id: null }).carries.confirmation).toBe(0);
    });
  });
});
