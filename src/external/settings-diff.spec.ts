import { unifiedDiff } from './settings-diff';

describe('the preview of a settings change', () => {
  it('Given no change, Then the diff is empty', () => {
    expect(unifiedDiff('/f', 'a\n', 'a\n')).toBe('');
  });

  it('Given no file before, Then every line is added', () => {
    expect(unifiedDiff('/f', null, '{\n}\n')).toBe('--- /dev/null\n+++ /f\n@@\n+{\n+}\n');
  });

  it('Given a file removed, Then every line is removed', () => {
    expect(unifiedDiff('/f', 'x\n', null)).toBe('--- /f\n+++ /dev/null\n@@\n-x\n');
  });

  it('Given a change in a long file, Then only it shows, with three lines of context on each side, hunks apart', () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i}`);
    const after = [...before];
    after[2] = 'changed';
    after[17] = 'also';
    expect(unifiedDiff('/f', before.join('\n'), after.join('\n')).split('\n')).toEqual([
      '--- /f',
      '+++ /f',
      '@@',
      ' l0',
      ' l1',
      '-l2',
      '+changed',
      ' l3',
      ' l4',
      ' l5',
      '@@',
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
});
