import { appendOutput, tailText } from './output-tail';

describe('a live output tail', () => {
  it('Given the lines read from the log, When made a tail, Then each ends with its newline', () => {
    expect(tailText(['a', 'b'])).toBe('a\nb\n');
    expect(tailText([])).toBe('');
  });

  it('Given a tail, When chunks split mid-line arrive, Then they join into the lines written', () => {
    expect(appendOutput(appendOutput('a\n', 'b', 10), 'c\nd\n', 10)).toBe('a\nbc\nd\n');
  });

  it('Given a full tail, When more lines arrive, Then only the last max lines are kept, a partial last one included', () => {
    expect(appendOutput('1\n2\n3\n', '4\n', 3)).toBe('2\n3\n4\n');
    expect(appendOutput('1\n2\n3\n', '4', 3)).toBe('2\n3\n4');
  });
});
