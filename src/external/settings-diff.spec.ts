import { unifiedDiff } from './settings-diff';

describe('the preview of a settings change', () => {
  it('Given no change, Then the diff is empty', () => {
    expect(unifiedDiff('/f', 'a\n', 'a\n')).toBe('');
  });

  it('Given no file before, Then every line is added', () => {
    expect(unifiedDiff('/f', null, '{\n}\n')).toBe('--- /dev/null\n+++ /f\n@@ -0,0 +1,2 @@\n+{\n+}\n');
  });

  it('Given a file removed, Then every line is removed', () => {
    expect(unifiedDiff('/f', 'x\n', null)).toBe('--- /f\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n');
  });

  it('Given a change in a long file, Then only it shows, with three lines of context on each side, hunks apart', () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i}`);
    const after = [...before];
    after[2] = 'changed';
    after[17] = 'also';
    expect(unifiedDiff('/f', `${before.join('\n')}\n`, `${after.join('\n')}\n`).split('\n')).toEqual([
      '--- /f',
      '+++ /f',
      '@@ -1,6 +1,6 @@',
      ' l0',
      ' l1',
      '-l2',
      '+changed',
      ' l3',
      ' l4',
      ' l5',
      '@@ -15,6 +15,6 @@',
      ' l14',
      ' l15',
      ' l16',
      '-l17',
      '+also',
      ' l18',
      ' l19',
      '',
    ]);
  });

  it('Given a file whose last line gains its newline, Then the diff says so, as diff -u does', () => {
    expect(unifiedDiff('/f', 'a', 'a\n')).toBe('--- /f\n+++ /f\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+a\n');
  });
});
