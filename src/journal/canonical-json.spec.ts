import { createHash } from 'node:crypto';
import { canonicalJson, canonicalValue, chainHash } from './canonical-json';

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

  it('given flat objects in sorted and unsorted key order, integer-like keys, undefined values and plain arrays, when written, then each is the sorted form', () => {
    expect(canonicalJson({ alias: 'w1', kind: 'nothing', session_id: 'cs_1', text: '' })).toBe('{"alias":"w1","kind":"nothing","session_id":"cs_1","text":""}');
    expect(canonicalJson({ text: '', alias: 'w1' })).toBe('{"alias":"w1","text":""}');
    expect(canonicalJson({ '2': 'b', '10': 'a' })).toBe('{"10":"a","2":"b"}');
    expect(canonicalJson({ a: 1, b: undefined, c: 'x' })).toBe('{"a":1,"c":"x"}');
    expect(canonicalJson(['a', 1, null, undefined, true])).toBe('["a",1,null,null,true]');
    expect(canonicalJson({ 'é': 1, 'e\u0301': 2, z: '\ud800' })).toBe('{"e\u0301":2,"z":"\\ud800","é":1}');
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":"p"}'))).toBe('{"__proto__":"p","b":1}');
    expect(canonicalJson({ b: 'x', a1: 1, '1a': 2, '': 3 })).toBe('{"":3,"1a":2,"a1":1,"b":"x"}');
  });

  it('given flat objects in unsorted key order whose strings and numbers JSON.stringify writes specially, when written, then each value is written as JSON.stringify writes it', () => {
    const values = ['', 'plain', 'quote " and back \\', 'tab\tnew\nline\u001f', '\u2028 and é', '\ud83d\ude00', 'lone \udc00', '\u007f', 0, -0, 1e21, 2e-7, -1.5, 123456789012, true, false, null];
    for (const v of values) {
      expect(canonicalJson({ z: v, a: v })).toBe(JSON.stringify({ a: v, z: v }));
      expect(canonicalJson(v)).toBe(JSON.stringify(v));
    }
  });

  it('given flat objects and arrays holding what JSON cannot hold, when written, then they are refused as deeper ones are', () => {
    for (const value of [{ a: 1, b: NaN }, { a: -Infinity }, [1, () => 2], ['x', Symbol('s')], { a: BigInt(2) }]) expect(() => canonicalJson(value)).toThrow(TypeError);
  });

  it('given 2,000 random values, when written, then each is written as the rule says', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const keys = ['a', 'b', 'session_id', 'alias', '10', '2', 'é', 'k"q', ''];
    const leaf = (): unknown => [null, undefined, true, 0, -1.5, 1e21, 'x', 'line\n"q"', '\ud800', ''][Math.floor(random() * 10)];
    const gen = (depth: number): unknown => {
      const r = random();
      if (depth > 3 || r < 0.3) return leaf();
      if (r < 0.55) return Array.from({ length: Math.floor(random() * 4) }, () => gen(depth + 1));
      const o: Record<string, unknown> = {};
      for (const k of keys) if (random() < 0.4) o[k] = gen(depth + 1);
      return o;
    };
    // The rule written plainly: keys sorted at every depth, undefined properties left out, undefined items null.
    const reference = (v: unknown): string => {
      if (v === null || typeof v !== 'object') return JSON.stringify(v);
      if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : reference(x))).join(',')}]`;
      const o = v as Record<string, unknown>;
      return `{${Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => `${JSON.stringify(k)}:${reference(o[k])}`).join(',')}}`;
    };
    for (let i = 0; i < 2000; i++) {
      const value = { root: gen(0) };
      expect(canonicalJson(value)).toBe(reference(value));
    }
  });

  describe('the value replay reads back', () => {
    // What replay hands out for a value: its canonical text parsed. Key order is compared through JSON.stringify.
    const replayed = (v: unknown): unknown => JSON.parse(canonicalJson(v));
    const same = (a: unknown, b: unknown) => {
      expect(a).toStrictEqual(b);
      expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    };

    it('given what JSON does not keep as it is, when copied, then the copy is what the text parses back to', () => {
      const nested = { z: [1, undefined, { y: 2, x: new Date(0) }], a: -0, n: new Number(4), s: new String('t'), b: new Boolean(true) };
      const samples: unknown[] = [
        nested,
        { '2': 'b', '10': 'a', b: 1, a: { '1': 1, '0': 0 } },
        JSON.parse('{"b":1,"__proto__":{"polluted":true}}'),
        { toJSON: (key: string) => ({ key, z: 1, a: 2 }) },
        [undefined, null, 'lone \ud800', '\u2028'],
        'text',
        -0,
        null,
      ];
      for (const v of samples) same(canonicalValue(v), replayed(v));
      const proto = canonicalValue(JSON.parse('{"__proto__":{"polluted":true}}')) as Record<string, unknown>;
      expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
      expect(Object.keys(proto)).toEqual(['__proto__']);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('given a value, when copied, then the copy shares nothing with it', () => {
      const inner = { list: [1, 2] };
      const copied = canonicalValue({ inner }) as { inner: { list: number[] } };
      inner.list.push(3);
      expect(copied.inner.list).toEqual([1, 2]);
      expect(copied.inner).not.toBe(inner);
    });

    it('given what JSON cannot hold, when copied, then it is refused with the message canonicalJson gives', () => {
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      for (const v of [{ a: 1, b: NaN }, { a: -Infinity }, [1, () => 2], ['x', Symbol('s')], { a: BigInt(2) }, undefined, cycle]) {
        expect(() => canonicalValue(v)).toThrow(TypeError);
        expect(() => canonicalValue(v)).toThrow((() => { try { canonicalJson(v); } catch (e) { return (e as Error).message; } return 'no error'; })());
      }
    });

    it('given 2,000 random values, when copied, then each is what its canonical text parses back to, and writes the same text', () => {
      let seed = 7;
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      const keys = ['a', 'b', 'session_id', '10', '2', '0', 'é', 'k"q', '', '__proto__'];
      const leaf = (): unknown => [null, undefined, true, 0, -0, -1.5, 1e21, 'x', 'line\n"q"', '\ud800', new Date(86400000)][Math.floor(random() * 11)];
      const gen = (depth: number): unknown => {
        const r = random();
        if (depth > 3 || r < 0.3) return leaf();
        if (r < 0.55) return Array.from({ length: Math.floor(random() * 4) }, () => gen(depth + 1));
        const o: Record<string, unknown> = {};
        for (const k of keys) if (random() < 0.4) Object.defineProperty(o, k, { value: gen(depth + 1), enumerable: true, writable: true, configurable: true });
        return o;
      };
      for (let i = 0; i < 2000; i++) {
        const value = { root: gen(0) };
        const copied = canonicalValue(value);
        same(copied, replayed(value));
        expect(canonicalJson(copied)).toBe(canonicalJson(value));
      }
    });
  });

  it('links the chain as sha256(prev_hash + event)', () => {
    const prev = 'a'.repeat(64);
    expect(chainHash(prev, '{"x":1}')).toBe(createHash('sha256').update(prev + '{"x":1}').digest('hex'));
  });
});
