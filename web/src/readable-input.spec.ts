import { readableInput } from './readable-input';

describe('readableInput', () => {
  it('Given a Bash request, When made readable, Then it is the command and its description', () => {
    expect(readableInput({ command: 'npm test', description: 'Run tests' })).toEqual({ kind: 'command', command: 'npm test', description: 'Run tests' });
  });

  it('Given a Write or an Edit, When made readable, Then it is the path and what is written (and what it replaces)', () => {
    expect(readableInput({ file_path: '/a/b.md', content: '# B' })).toEqual({ kind: 'file', path: '/a/b.md', content: '# B', replaces: null });
    expect(readableInput({ file_path: '/a/b.md', old_string: 'x', new_string: 'y' })).toEqual({ kind: 'file', path: '/a/b.md', content: 'y', replaces: 'x' });
  });

  it('Given any other input, When made readable, Then it is its JSON, indented', () => {
    expect(readableInput({ url: 'https://example.org', n: 1 })).toEqual({ kind: 'json', json: '{\n  "url": "https://example.org",\n  "n": 1\n}' });
    expect(readableInput({ command: 42 })).toEqual({ kind: 'json', json: '{\n  "command": 42\n}' });
  });
});
