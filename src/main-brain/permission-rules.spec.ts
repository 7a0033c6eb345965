import { deniedBy, ruleMatches } from './permission-rules';

describe('permission rules', () => {
  it.each([
    ['Bash', { tool: 'Bash', input: { command: 'rm -rf /' } }, true],
    ['Bash', { tool: 'Read', input: {} }, false],
    ['Bash(npm run test *)', { tool: 'Bash', input: { command: 'npm run test -- --ci' } }, true],
    ['Bash(npm run test *)', { tool: 'Bash', input: { command: 'npm publish' } }, false],
    ['Bash(git push:*)', { tool: 'Bash', input: { command: 'git push origin main' } }, true],
    ['Edit(src/**)', { tool: 'Edit', input: { file_path: 'src/a/b.ts' } }, true],
    ['Edit(src/*)', { tool: 'Edit', input: { file_path: 'src/a/b.ts' } }, false],
    ['Read(.env)', { tool: 'Read', input: { file_path: '.env' } }, true],
    ['WebFetch(domain:example.com)', { tool: 'WebFetch', input: { url: 'https://example.com/x' } }, true],
    ['mcp__github', { tool: 'mcp__github__create_issue', input: {} }, true],
    ['mcp__github__create_issue', { tool: 'mcp__github__delete_repo', input: {} }, false],
  ])('%s against %j → %s', (rule, use, expected) => {
    expect(ruleMatches(rule, use)).toBe(expected);
  });

  it('names the first matching deny rule', () => {
    expect(deniedBy(['Read(.env)', 'Bash(rm *)', 'Bash'], { tool: 'Bash', input: { command: 'rm -rf build' } })).toBe('Bash(rm *)');
    expect(deniedBy(['Write'], { tool: 'Bash', input: {} })).toBeNull();
  });
});
