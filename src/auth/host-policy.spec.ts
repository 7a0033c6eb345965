import { allowedHostValues, allowedOriginValues, hostAllowed, hostPolicy, originAllowed } from './host-policy';

describe('host policy', () => {
  describe('given the default bind 127.0.0.1 on port 4820', () => {
    const policy = hostPolicy('127.0.0.1', []);
    it.each([
      ['127.0.0.1:4820', true],
      ['localhost:4820', true],
      ['LocalHost:4820', true],
      ['[::1]:4820', true],
      ['localhost', false],
      ['localhost:4821', false],
      ['attacker.example:4820', false],
      ['localhost.attacker.example:4820', false],
      ['127.0.0.1.nip.io:4820', false],
      ['[::1', false],
      ['localhost:48a0', false],
      ['localhost:', false],
      ['', false],
    ])('when Host is %j then allowed is %s', (host, allowed) => {
      expect(hostAllowed(policy, host, 4820)).toBe(allowed);
    });

    it('when the request came in without a socket (in-process), then the name alone decides', () => {
      expect(hostAllowed(policy, 'localhost:80', null)).toBe(true);
      expect(hostAllowed(policy, 'attacker.example', null)).toBe(false);
      expect(hostAllowed(policy, undefined, null)).toBe(false);
    });

    it.each([
      ['http://localhost:4820', true],
      ['http://127.0.0.1:4820', true],
      ['http://[::1]:4820', true],
      ['https://localhost:4820', false],
      ['http://localhost:3000', false],
      ['http://localhost', false],
      ['http://attacker.example:4820', false],
      ['null', false],
      ['file://', false],
      ['chrome-extension://abc', false],
      ['http://localhost:4820/path', false],
    ])('when Origin is %j then allowed is %s', (origin, allowed) => {
      expect(originAllowed(policy, origin, 4820)).toBe(allowed);
    });
  });

  describe('given BRAINSTEM_ALLOWED_HOSTS and a wildcard bind', () => {
    const policy = hostPolicy('0.0.0.0', ['Brainstem.Test', 'proxy.test:8443', '::2']);
    it('then the listed names answer on our port, a host:port entry on its own port, and the wildcard itself never', () => {
      expect(hostAllowed(policy, 'brainstem.test:4820', 4820)).toBe(true);
      expect(hostAllowed(policy, 'proxy.test:8443', 4820)).toBe(true);
      expect(hostAllowed(policy, 'proxy.test:4820', 4820)).toBe(false);
      expect(hostAllowed(policy, '[::2]:4820', 4820)).toBe(true);
      expect(hostAllowed(policy, '0.0.0.0:4820', 4820)).toBe(false);
      expect(originAllowed(policy, 'https://proxy.test:8443', 4820)).toBe(true);
    });

    it("then the SDK's Origin list is exactly what originAllowed accepts, a TLS proxy's https origin included", () => {
      const origins = allowedOriginValues(policy, 4820);
      expect(origins).toEqual(expect.arrayContaining(['http://localhost:4820', 'http://[::2]:4820', 'https://proxy.test:8443']));
      for (const origin of origins) expect({ origin, allowed: originAllowed(policy, origin, 4820) }).toEqual({ origin, allowed: true });
      expect(originAllowed(policy, 'https://localhost:4820', 4820)).toBe(false);
      expect(origins).not.toContain('https://localhost:4820');
    });

    it("then a TLS proxy listed on port 443 is answered with the Host a browser sends it (no port), and only that name", () => {
      const tls = hostPolicy('127.0.0.1', ['brainstem.example.ts.net:443']);
      expect(hostAllowed(tls, 'brainstem.example.ts.net', 4820)).toBe(true);
      expect(hostAllowed(tls, 'brainstem.example.ts.net:443', 4820)).toBe(true);
      expect(hostAllowed(tls, 'brainstem.example.ts.net:4820', 4820)).toBe(false);
      expect(hostAllowed(tls, 'other.example.ts.net', 4820)).toBe(false);
      expect(originAllowed(tls, 'https://brainstem.example.ts.net', 4820)).toBe(true);
      expect(allowedHostValues(tls, 4820)).toEqual(expect.arrayContaining(['brainstem.example.ts.net', 'brainstem.example.ts.net:443']));
    });

    it("then the SDK's list holds every allowed Host value for the port", () => {
      expect(allowedHostValues(policy, 4820).sort()).toEqual(['127.0.0.1:4820', '[::1]:4820', '[::2]:4820', 'brainstem.test:4820', 'localhost:4820', 'proxy.test:8443'].sort());
    });
  });
});
