import { hostProblem, hostRule, matchingRule, ruleMatches } from './network-hosts';

describe('network hosts and rules', () => {
  it.each([
    ['example.com', 443, 'example.com', true],
    ['example.com', 443, 'EXAMPLE.com', true],
    ['example.com.', 443, 'example.com', true],
    ['api.example.com', 443, 'example.com', false],
    ['api.example.com', 443, '*.example.com', true],
    ['a.b.example.com', 443, '*.example.com', true],
    ['example.com', 443, '*.example.com', false],
    ['badexample.com', 443, '*.example.com', false],
    ['example.com', 443, 'example.com:443', true],
    ['example.com', 80, 'example.com:443', false],
    ['api.example.com', 8443, '*.example.com:8443', true],
    ['anything.org', 22, '*:22', true],
    ['anything.org', 23, '*:22', false],
    ['anything.org', 1, '*', true],
    ['::1', 443, '[::1]:443', true],
    ['::1', 80, '[::1]:443', false],
    ['::1', 80, '[::1]', true],
    ['10.0.0.1', 80, '*.0.0.1', false],
    ['10.0.0.1', 80, '10.0.0.1', true],
    // srt leaves a port with a leading zero or past 65535 in the host, so the rule matches no host.
    ['example.com', 443, 'example.com:0443', false],
    ['example.com', 443, 'example.com:70000', false],
    // A regex metacharacter in a rule is a character, not a pattern.
    ['exampleXcom', 443, 'example.com', false],
    ['a.example.com', 443, '.*', false],
  ])('%s:%i against rule %s: %s', (host, port, rule, matches) => {
    expect(ruleMatches(rule, host, port)).toBe(matches);
  });

  it('names the first rule that matches', () => {
    expect(matchingRule(['other.org', '*.example.com', 'x.example.com'], 'x.example.com', 443)).toBe('*.example.com');
    expect(matchingRule([], 'x.example.com', 443)).toBeNull();
  });

  it.each([
    ['example.com', null],
    ['localhost', null],
    ['my_host.internal', null],
    ['10.1.2.3', null],
    ['::1', null],
    ['2001:db8::1', null],
    ['', /empty/],
    ['a'.repeat(254), /at most 253/],
    ['evil.com\u0000.allowed.com', /control characters/],
    ['line\nbreak.com', /control characters/],
    ['[::1]', /IPv6 address without brackets/],
    ['http://x.com', /hostname/],
    ['x.com/path', /hostname/],
    ['-lead.com', /hostname/],
    ['a..b', /hostname/],
  ])('host %j: %s', (host, problem) => {
    const found = hostProblem(host);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toMatch(problem);
  });

  it('writes a remembered host:port as a rule, IPv6 in brackets', () => {
    expect(hostRule('Example.COM', 443)).toBe('example.com:443');
    expect(hostRule('::1', 8080)).toBe('[::1]:8080');
  });
});
