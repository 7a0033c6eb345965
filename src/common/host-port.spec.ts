import { splitHostPort } from './host-port';

describe('host and port', () => {
  it('given host values as written, then it splits host and port without a pattern, refusing what no client sends', () => {
    expect(splitHostPort('a.test:1')).toEqual({ name: 'a.test', port: '1' });
    expect(splitHostPort('[::1]:2')).toEqual({ name: '[::1]', port: '2' });
    expect(splitHostPort('::1')).toEqual({ name: '[::1]' });
    expect(splitHostPort(':80')).toBeNull();
    expect(splitHostPort('a.test:123456')).toBeNull();
    expect(splitHostPort('[::1]x')).toBeNull();
  });
});
