import { loggedUrl } from './request-log.hook';

describe('the request log line', () => {
  it("given an action link's path, then the log names the route, never the capability it holds", () => {
    expect(loggedUrl('/api/v1/notifications/actions/bsa_ac_x.SECRETMAC')).toBe('/api/v1/notifications/actions/…');
    expect(loggedUrl('/api/v1/notifications/actions/bsa_ac_x.SECRETMAC?x=1')).toBe('/api/v1/notifications/actions/…?x=1');
  });

  it('given any other path, then it is logged as it is', () => {
    expect(loggedUrl('/api/v1/notifications/rules')).toBe('/api/v1/notifications/rules');
    expect(loggedUrl('/api/v1/coding-sessions/cs_1')).toBe('/api/v1/coding-sessions/cs_1');
  });
});
