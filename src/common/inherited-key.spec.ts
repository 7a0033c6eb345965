import { inheritedKeyPath } from './inherited-key';

describe('inheritedKeyPath', () => {
  it('Given keys named like Object.prototype members at any depth, Then it names the first one found', () => {
    expect(inheritedKeyPath({ a: { b: [{ constructor: 'x' }] } })).toBe('a.b[0].constructor');
    expect(inheritedKeyPath(JSON.parse('{"__proto__": {}}'))).toBe('__proto__');
    expect(inheritedKeyPath({ env: { hasOwnProperty: '1' } })).toBe('env.hasOwnProperty');
  });

  it('Given ordinary keys, scalars, and such names as values, Then it finds nothing', () => {
    expect(inheritedKeyPath({ name: 'constructor', list: ['toString'], nested: { a: 1 } })).toBeNull();
    expect(inheritedKeyPath('x')).toBeNull();
    expect(inheritedKeyPath(null)).toBeNull();
  });
});
