import { createHash } from 'node:crypto';
import { canonicalJson, chainHash } from './canonical-json';

describe('canonical JSON', () => {
  it('sorts keys at every depth and drops undefined properties', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: undefined, x: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"x":2,"z":1}]},"b":1}');
  });

  it('gives the same text for the same data whatever the key order', () => {
    expect(canonicalJson({ x: 1, y: { q: 2, p: 3 } })).toBe(canonicalJson({ y: { p: 3, q: 2 }, x: 1 }));
  });

  it('writes dates as ISO strings and undefined array items as null, like JSON', () => {
    expect(canonicalJson({ at: new Date('2026-01-02T03:04:05.000Z'), list: [undefined, 1] })).toBe(
      '{"at":"2026-01-02T03:04:05.000Z","list":[null,1]}',
    );
  });

  it.each([
    ['NaN', { n: NaN }],
    ['Infinity', [Infinity]],
    ['a bigint', { n: BigInt(1) }],
    ['a function', { f: () => 1 }],
    ['undefined', undefined],
  ])('refuses %s', (_label, value) => {
    expect(() => canonicalJson(value)).toThrow(TypeError);
  });

  it('refuses cycles', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => canonicalJson(a)).toThrow(TypeError);
  });

  it('writes exactly what JSON.stringify writes for data whose keys are already sorted', () => {
    const samples: unknown[] = [
      { a: 'line\nbreak "quoted" \\ back', b: [1.5, -0, 1e21, 2e-7, true, false, null], c: { 'k"ey': '\u2028', 'ünï': '\ud83d\ude00' } },
      [[], {}, [{}], ''],
      'lone surrogate \ud800',
      { '': 0, '\u0001': 2, ' ': 1 },
      { n: new Number(3), s: new String('x'), t: new Boolean(false) },
    ];
    for (const value of samples) expect(canonicalJson(value)).toBe(JSON.stringify(value));
  });

  it('refuses a symbol and an object reached twice on one path, but not a shared object on two paths', () => {
    expect(() => canonicalJson({ s: Symbol('x') })).toThrow(TypeError);
    const shared = { v: 1 };
    expect(canonicalJson({ a: shared, b: [shared] })).toBe('{"a":{"v":1},"b":[{"v":1}]}');
  });

  it('links the chain as sha256(prev_hash + event)', () => {
    const prev = 'a'.repeat(64);
    expect(chainHash(prev, '{"x":1}')).toBe(createHash('sha256').update(prev + '{"x":1}').digest('hex'));
  });
});
