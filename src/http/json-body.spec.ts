import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-body';

describe('nestsDeeperThan', () => {
  const nested = (levels: number): unknown => (levels <= 1 ? {} : [nested(levels - 1)]);

  it('Given values up to the limit, Then they pass; one level more does not', () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
  });

  it('Given scalars and wide shallow values, Then they pass', () => {
    expect(nestsDeeperThan('x', 1)).toBe(false);
    expect(nestsDeeperThan(null, 1)).toBe(false);
    expect(nestsDeeperThan({ a: 1, b: [1, 2, 3], c: { d: 'e' } }, 3)).toBe(false);
    expect(nestsDeeperThan({ c: { d: {} } }, 2)).toBe(true);
  });

  it('Given a value far deeper than the stack allows recursion, Then it answers without overflowing', () => {
    let deep: unknown = {};
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(nestsDeeperThan(deep, MAX_JSON_DEPTH)).toBe(true);
  });
});
