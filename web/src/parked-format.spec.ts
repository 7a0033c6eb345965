import { ParkedStatus, countdown, parkedDetail, parkedFlag, parkedNote } from './parked-format';

// Local times, so the clock the page shows reads the same in any time zone.
const at = (h: number, m: number, s = 0): string => new Date(2026, 10, 26, h, m, s).toISOString();
const parked = (over: Partial<ParkedStatus> = {}): ParkedStatus => ({ reason: 'usage_limit', resumes_at: at(4, 10), source: 'runtime', limit_type: 'five_hour', attempt: 1, since: at(3, 28), fallback_session_id: null, ...over });

describe('a parked session on the page', () => {
  it('Given a resume time ahead, Then the flag counts down to it and names its clock time; past it, it is resuming', () => {
    expect(parkedFlag(parked(), Date.parse(at(3, 28)))).toBe('Parked (usage limit) · resumes in 42m (04:10)');
    expect(parkedFlag(parked({ reason: 'rate_limit' }), Date.parse(at(4, 9, 30)))).toBe('Parked (rate limit) · resumes in 30s (04:10)');
    expect(parkedFlag(parked(), Date.parse(at(4, 10)))).toBe('Parked (usage limit) · resuming now');
  });

  it('Given it kept parked (no resume time), Then the flag says so, whatever the time', () => {
    expect(parkedFlag(parked({ reason: 'rate_limit', resumes_at: null, source: 'user' }), Date.parse(at(3, 28)))).toBe('Parked (rate limit) · kept parked');
    expect(parkedNote(parked({ resumes_at: null }))).toBe('kept parked until someone resumes it');
    expect(parkedNote(parked())).toBe('resumes by itself at 04:10');
  });

  it('Given what is left, Then the countdown rounds up, never saying less than is left', () => {
    expect([999, 59_001, 60_000, 90_000, 3_540_001, 3_600_000, 3_660_001, 5 * 3_600_000].map(countdown)).toEqual(['1s', '1m', '1m', '2m', '1h', '1h', '1h 2m', '5h']);
  });

  it('Given where its resume time came from, Then the detail says which limit refused it and why it waits', () => {
    expect(parkedDetail(parked())).toBe('Its model refused a turn at its usage limit (five_hour) at 03:28. The resume time is the reset the runtime named.');
    expect(parkedDetail(parked({ reason: 'rate_limit', limit_type: null, source: 'backoff', attempt: 3 }))).toBe(
      'Its model refused a turn at its rate limit at 03:28, refusal 3 in a row. The runtime named no reset: it is tried again after a backoff.',
    );
  });
});
