import { slugify, uniqueId, uniqueName } from './profile.slug';

describe('profile ids', () => {
  it.each([
    ['Code Reviewer', 'code-reviewer'],
    ['  Émile’s  Go/Rust helper!! ', 'emile-s-go-rust-helper'],
    ['../../etc/passwd', 'etc-passwd'],
    ['a\u0000b', 'a-b'],
    ['日本語', 'profile'],
    ['---', 'profile'],
    ['x'.repeat(100), 'x'.repeat(64)],
    [`${'a'.repeat(63)} b`, 'a'.repeat(63)],
  ])('slugifies %j to %j', (name, id) => {
    expect(slugify(name)).toBe(id);
    expect(id).toMatch(/^[a-z0-9][a-z0-9-]{0,63}$/);
  });

  it('makes ids unique with -2, -3, … and keeps them within 64 characters', () => {
    const taken = new Set(['review', 'review-2', 'x'.repeat(64)]);
    expect(uniqueId('review', (id) => taken.has(id))).toBe('review-3');
    expect(uniqueId('fresh', (id) => taken.has(id))).toBe('fresh');
    expect(uniqueId('x'.repeat(64), (id) => taken.has(id))).toBe(`${'x'.repeat(62)}-2`);
  });

  it('makes names unique with (2), (3), …', () => {
    const taken = new Set(['Review', 'Review (2)']);
    expect(uniqueName('Review', (n) => taken.has(n))).toBe('Review (3)');
    expect(uniqueName('Review', (n) => taken.has(n), ' (copy)')).toBe('Review (copy)');
  });

  it('shortens a long base so the name with its suffix stays within 200 characters', () => {
    const long = 'n'.repeat(200);
    expect(uniqueName(long, () => false)).toBe(long);
    expect(uniqueName(long, (n) => n === long)).toBe(`${'n'.repeat(196)} (2)`);
    expect(uniqueName(long, () => false, ' (copy)')).toBe(`${'n'.repeat(193)} (copy)`);
    expect(uniqueName(`${'n'.repeat(192)} trailing`, () => false, ' (copy)')).toBe(`${'n'.repeat(192)} (copy)`);
  });
});
