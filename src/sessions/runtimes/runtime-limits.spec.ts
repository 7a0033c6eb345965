import { claudeLimit, codexLimit, codexRetryTime, geminiLimit, opencodeLimit } from './runtime-limits';

const NOW = new Date(2026, 11, 3, 11, 14, 20);

describe('what each runtime says of a limit', () => {
  it("Given claude's result for a subscription's usage limit (as claude 2.1.332 wrote it), When read, Then a usage limit with its reset and type", () => {
    const result = {
      type: 'result',
      is_error: true,
      api_error_status: 429,
      api_error: 'usage_limit_reached',
      api_error_params: { rate_limit_info: { status: 'rejected', resetsAt: 1796296490, rateLimitType: 'five_hour', isUsingOverage: false } },
      result: "You've hit your 5-hour limit · resets 11:14am (UTC)",
    };
    expect(claudeLimit(result, null)).toEqual({ reason: 'usage_limit', resets_at: 1796296490000, limit_type: 'five_hour' });
  });

  it("Given claude's plain 429 after its own retries, When read, Then a rate limit, whose reset is the turn's rate_limit_event's if it named one", () => {
    const result = { type: 'result', is_error: true, api_error_status: 429, result: 'API Error: Request rejected (429) · rate limited' };
    expect(claudeLimit(result, null)).toEqual({ reason: 'rate_limit', resets_at: null, limit_type: null });
    expect(claudeLimit(result, { resets_at: 5000, limit_type: 'seven_day' })).toEqual({ reason: 'rate_limit', resets_at: 5000, limit_type: 'seven_day' });
  });

  it("Given claude's result of any other turn, When read, Then no limit", () => {
    expect(claudeLimit({ type: 'result', is_error: false, result: 'done' }, null)).toBeNull();
    expect(claudeLimit({ type: 'result', is_error: true, api_error_status: 400 }, null)).toBeNull();
  });

  it('Given codex\'s "try again at" (today, or another day), When read, Then the end of the minute it names, in local time', () => {
    expect(codexRetryTime('Try again at 11:15 AM.', NOW)).toBe(new Date(2026, 11, 3, 11, 16).getTime());
    expect(codexRetryTime('or try again at 12:05 AM.', NOW)).toBe(new Date(2026, 11, 3, 0, 6).getTime());
    expect(codexRetryTime('try again at Dec 4th, 2026 4:05 PM.', NOW)).toBe(new Date(2026, 11, 4, 16, 6).getTime());
    expect(codexRetryTime('try again at 13:99 PM', NOW)).toBeNull();
    expect(codexRetryTime('Try again later.', NOW)).toBeNull();
  });

  it("Given codex's failed turns (its 0.171 messages), When read, Then a plan's usage limit with its time, or a throttle that outlasted its retries", () => {
    const usage = 'You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 11:15 AM.';
    expect(codexLimit(usage, NOW)).toEqual({ reason: 'usage_limit', resets_at: new Date(2026, 11, 3, 11, 16).getTime(), limit_type: null });
    expect(codexLimit('exceeded retry limit, last status: 429 Too Many Requests', NOW)).toEqual({ reason: 'rate_limit', resets_at: null, limit_type: null });
    expect(codexLimit("ran out of room in the model's context window", NOW)).toBeNull();
  });

  it("Given gemini's RESOURCE_EXHAUSTED with a retry delay, When read, Then a limit resetting after that delay", () => {
    expect(geminiLimit('[API Error: {"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Quota exceeded. Please retry in 13.5s."}}]', 1000)).toEqual({ reason: 'usage_limit', resets_at: 14_500, limit_type: null });
    expect(geminiLimit('You have exhausted your capacity on this model. Your quota will reset after 1h2m3s.', 0)).toMatchObject({ resets_at: 3_723_000 });
    expect(geminiLimit('RESOURCE_EXHAUSTED', 0)).toMatchObject({ resets_at: null });
    expect(geminiLimit('Context window will overflow', 0)).toBeNull();
  });

  it("Given opencode's APIError of status 429, When read, Then a rate limit, resetting after its retry-after", () => {
    expect(opencodeLimit({ name: 'APIError', data: { message: 'rate limited', statusCode: 429, responseHeaders: { 'retry-after': '30' } } }, 1000)).toEqual({ reason: 'rate_limit', resets_at: 31_000, limit_type: null });
    expect(opencodeLimit({ name: 'APIError', data: { statusCode: 429 } }, 0)).toMatchObject({ resets_at: null });
    expect(opencodeLimit({ name: 'APIError', data: { statusCode: 500 } }, 0)).toBeNull();
  });
});
