import { claudeRateLimit, claudeTurnUsage, codexTurnUsage, geminiTurnUsage, mergeUsage, modelInArgs, opencodeStepUsage } from './runtime-usage';

/** The lines are what the pinned CLIs wrote against the fake model APIs (test/support/fake-*-api.ts), cut to what is read. */
describe("the runtimes' usage reports", () => {
  it("Given claude 2.1.33x's result, When read, Then this turn's usage and cost come per model from model_usage_since_last_result", () => {
    const result = {
      type: 'result',
      total_cost_usd: 0.002512,
      usage: { input_tokens: 200, cache_creation_input_tokens: 10, cache_read_input_tokens: 30, output_tokens: 40 },
      model_usage_since_last_result: { 'claude-opus-5-5': { inputTokens: 200, outputTokens: 40, cacheReadInputTokens: 30, cacheCreationInputTokens: 10, costUSD: 0.001656 } },
    };
    expect(claudeTurnUsage(result, null, 0.000856)).toEqual([
      { model: 'claude-opus-5-5', input_tokens: 200, output_tokens: 40, cache_read_tokens: 30, cache_write_tokens: 10, cost_usd: 0.001656 },
    ]);
  });

  it("Given an older claude's result without it, When read, Then the turn's usage is `usage` and its cost what total_cost_usd grew by", () => {
    const result = { type: 'result', total_cost_usd: 0.3, usage: { input_tokens: 5, output_tokens: 2 } };
    expect(claudeTurnUsage(result, 'claude-sonnet-4-5', 0.1)).toEqual([{ model: 'claude-sonnet-4-5', input_tokens: 5, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: expect.closeTo(0.2, 10) }]);
  });

  it('Given a result of a turn the API refused (nothing used), When read, Then there is no usage', () => {
    expect(claudeTurnUsage({ total_cost_usd: 0, usage: { input_tokens: 0, output_tokens: 0 }, model_usage_since_last_result: {} }, null, 0)).toEqual([]);
  });

  it("Given claude's rate_limit_event, When read, Then its state, reset (epoch ms) and limit come out; anything else is none", () => {
    expect(claudeRateLimit({ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: 1795709191, rateLimitType: 'five_hour' } })).toEqual({ status: 'rejected', resets_at: 1795709191000, limit_type: 'five_hour' });
    expect(claudeRateLimit({ type: 'rate_limit_event', rate_limit_info: { status: 'maybe' } })).toBeNull();
  });

  it("Given codex's turn.completed, When read, Then the cached tokens are taken out of the input", () => {
    const u = { input_tokens: 300, cached_input_tokens: 80, cache_write_input_tokens: 0, output_tokens: 21, reasoning_output_tokens: 0 };
    expect(codexTurnUsage(u, 'gpt-5')).toEqual([{ model: 'gpt-5', input_tokens: 220, output_tokens: 21, cache_read_tokens: 80, cache_write_tokens: 0, cost_usd: null }]);
  });

  it("Given gemini's result stats, When read, Then each model's thoughts (in total_tokens only) count as output", () => {
    const stats = { total_tokens: 327, input_tokens: 300, output_tokens: 21, cached: 60, input: 240, models: { 'gemini-2.5-flash': { total_tokens: 327, input_tokens: 300, output_tokens: 21, cached: 60, input: 240 } } };
    expect(geminiTurnUsage(stats, null)).toEqual([{ model: 'gemini-2.5-flash', input_tokens: 240, output_tokens: 27, cache_read_tokens: 60, cache_write_tokens: 0, cost_usd: null }]);
  });

  it("Given opencode's step_finish parts of one turn, When merged, Then tokens and costs sum per model", () => {
    const step = (input: number, cost: number) => opencodeStepUsage({ tokens: { input, output: 7, reasoning: 1, cache: { read: 30, write: 10 } }, cost }, null);
    expect(mergeUsage(step(200, 0.5), step(300, 0.25))).toEqual([{ model: null, input_tokens: 500, output_tokens: 16, cache_read_tokens: 60, cache_write_tokens: 20, cost_usd: 0.75 }]);
  });

  it('Given garbage in a report, When read, Then it is passed on as it is, for the check where it is counted to refuse', () => {
    expect(codexTurnUsage({ input_tokens: 'x', output_tokens: -5 }, null)[0]).toMatchObject({ input_tokens: 'x', output_tokens: -5 });
  });

  it('Given command lines, When the model is looked for, Then -m, --model, --model= and codex -c model= are found', () => {
    expect(modelInArgs(['exec', '-m', 'gpt-5'])).toBe('gpt-5');
    expect(modelInArgs(['--model=anthropic/claude-sonnet-4-5'])).toBe('anthropic/claude-sonnet-4-5');
    expect(modelInArgs(['-c', 'model="gpt-5-codex"', '--json'])).toBe('gpt-5-codex');
    expect(modelInArgs(['-c', 'model_reasoning_effort="high"'])).toBeNull();
  });
});
