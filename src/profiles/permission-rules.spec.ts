import { RuleScope, ToolUse, deniedBy, ruleMatches } from './permission-rules';

const scope: RuleScope = { cwd: '/home/me/project', home: '/home/me' };
const bash = (command: string): ToolUse => ({ tool: 'Bash', input: { command } });
const file = (tool: string, file_path: string): ToolUse => ({ tool, input: { file_path } });
const fetch = (url: string): ToolUse => ({ tool: 'WebFetch', input: { url } });
const mcp = (tool: string): ToolUse => ({ tool, input: {} });

/**
 * Each row: the rule, the tool use, whether the rule matches it, and why. "docs" is Claude Code's documented syntax
 * (code.claude.com/docs/en/permissions: "Permission rule syntax", "Wildcard patterns", "Read and Edit", "WebFetch",
 * "MCP", and the compound commands and process wrappers it names); "matcher" is what Claude Code's matcher does where
 * the docs are silent (a trailing ` *` is optional: `ls *` matches `ls`); "gitignore" is git's pattern format, which
 * the docs name for paths; "deny" marks a reading wider than Claude Code's, chosen because this list only denies.
 */
describe('permission rules (Claude Code syntax), read as a deny list', () => {
  it.each<[string, ToolUse, boolean, string]>([
    // The whole tool
    ['Bash', bash('rm -rf /'), true, 'docs: a bare tool name matches every use'],
    ['Bash(*)', bash('anything at all'), true, 'docs: Bash(*) is Bash'],
    ['Bash', file('Read', '/home/me/project/a'), false, 'docs: another tool'],
    ['Bash(rm -rf *)', { tool: 'Read', input: { command: 'rm -rf x' } }, false, 'docs: the rule names Bash'],
    // Wildcards: `*` is any text, slashes and spaces included
    ['Bash(rm -rf *)', bash('rm -rf /tmp/x'), true, 'docs: * matches any characters, / included'],
    ['Bash(rm -rf *)', bash('rm -rf /home/me/project'), true, 'docs: * matches any characters, / included'],
    ['Bash(rm -rf *)', bash('rm -rf'), true, 'matcher: a trailing " *" is optional'],
    ['Bash(rm -rf *)', bash('rm notes.txt'), false, 'docs: the literal text must be there'],
    ['Bash(rm -rf *)', bash('rm -r -f /tmp/x'), false, 'docs: rules match text, not what a command means'],
    ['Bash(git * main)', bash('git push origin main'), true, 'docs: * anywhere in the pattern'],
    ['Bash(git * main)', bash('git push origin main --force'), false, 'docs: the pattern ends with main'],
    ['Bash(* --version)', bash('node --version'), true, 'docs: a leading *'],
    ['Bash(npm run build)', bash('npm run build'), true, 'docs: no * is the exact command'],
    ['Bash(npm run build)', bash('npm run build --prod'), false, 'docs: no * is the exact command'],
    // Word boundaries
    ['Bash(ls *)', bash('ls -la'), true, 'docs: Bash(ls *) matches ls -la'],
    ['Bash(ls *)', bash('lsof'), false, 'docs: ... but not lsof'],
    ['Bash(ls*)', bash('lsof'), true, 'docs: Bash(ls*) matches both'],
    ['Bash(npm run test *)', bash('npm run test -- --ci'), true, 'docs: wildcard form'],
    ['Bash(npm run test*)', bash('npm run test:unit'), true, 'docs: no space, no boundary'],
    // The legacy `:*` suffix, documented as the same as ` *`
    ['Bash(npm run test:*)', bash('npm run test'), true, 'docs: :* is " *", whose * is optional at the end'],
    ['Bash(npm run test:*)', bash('npm run test -- --watch'), true, 'docs: :* is " *"'],
    ['Bash(npm run test:*)', bash('npm run test:unit'), false, 'docs: :* is " *", a word boundary'],
    ['Bash(npm run test:*)', bash('npm run testing'), false, 'docs: :* is " *", a word boundary'],
    ['Bash(rm:*)', bash('rm -rf /important'), true, 'docs: :* is " *"'],
    ['Bash(rm:*)', bash('rmdir build'), false, 'docs: :* is " *", a word boundary'],
    ['Bash(git push:*)', bash('git pushd /tmp'), false, 'docs: :* is " *", a word boundary'],
    // Compound commands: a deny on any command in it denies the whole
    ['Bash(rm -rf *)', bash('ls && rm -rf /tmp/x'), true, 'docs: && separates commands'],
    ['Bash(rm -rf *)', bash('cd /tmp; rm -rf x'), true, 'docs: ; separates commands'],
    ['Bash(rm -rf *)', bash('find . -name x | xargs rm -rf'), true, 'docs: | separates commands; deny: xargs wraps one'],
    ['Bash(rm -rf *)', bash('false || rm -rf build'), true, 'docs: || separates commands'],
    ['Bash(rm -rf *)', bash('echo $(rm -rf /tmp/x)'), true, 'deny: a command substitution runs its command'],
    ['Bash(rm -rf *)', bash('echo `rm -rf /tmp/x`'), true, 'deny: backticks run their command'],
    ['Bash(npm test)', bash('npm test && rm -rf /'), true, 'deny: the allowed half matches the rule on its own'],
    // What only wraps a command
    ['Bash(rm -rf *)', bash('timeout 5 rm -rf build'), true, 'docs: process wrappers such as timeout are stripped'],
    ['Bash(rm -rf *)', bash('nohup rm -rf build'), true, 'docs: process wrappers such as nohup are stripped'],
    ['Bash(rm -rf *)', bash('FOO=1 rm -rf build'), true, 'deny: an environment assignment only prefixes the command'],
    ['Bash(rm -rf *)', bash('/bin/rm -rf build'), true, "deny: the command's directory does not change it"],
    ['Bash(rm -rf *)', bash('rm  -rf   "build"'), true, 'deny: spaces and quotes as the shell reads them'],
    // Rule text is text, never a regular expression
    ['Bash(echo (a|b)+)', bash('echo (a|b)+'), true, 'docs: literal text'],
    ['Bash(echo (a|b)+)', bash('echo aab'), false, 'docs: literal text, not a regex'],
    ['Bash(echo a.c)', bash('echo abc'), false, 'docs: . is a dot'],
    ['Bash(echo [x]*)', bash('echo x'), false, 'docs: [x] is literal text'],
    ['Bash(echo \\*)', bash('echo *'), true, 'matcher: \\* is a literal star'],
    ['Bash(echo \\*)', bash('echo hi'), false, 'matcher: \\* is a literal star'],
    // Read and Edit: gitignore-style paths
    ['Edit(src/**)', file('Edit', '/home/me/project/src/a/b.ts'), true, 'docs: relative to the cwd, ** at any depth'],
    ['Edit(src/**)', file('Edit', '/home/me/project/test/a.ts'), false, 'docs: outside src'],
    ['Edit(src/**)', file('Write', '/home/me/project/src/new.ts'), true, 'docs: Edit rules apply to every tool that edits files'],
    ['Edit(/src/**)', file('Edit', 'src/x.ts'), true, 'docs: /path is from the project root'],
    ['Edit(src/*)', file('Edit', '/home/me/project/src/a/b.ts'), true, 'gitignore: src/a matches, and covers what is in it'],
    ['Edit(src/{a,b}.ts)', file('Edit', '/home/me/project/src/a.ts'), false, 'gitignore: no braces'],
    ['Read(./.env)', file('Read', '/home/me/project/.env'), true, 'docs: ./path is from the cwd'],
    ['Read(./.env)', file('Read', '/home/me/project/pkg/.env'), false, 'docs: ./path is anchored'],
    ['Read(.env)', file('Read', '/home/me/project/pkg/.env'), true, 'gitignore: a name without / matches at any depth'],
    ['Read(.env)', file('Read', '/home/me/project/src/../.env'), true, 'deny: the path as it resolves'],
    ['Read(//etc/passwd)', file('Read', '/etc/passwd'), true, 'docs: //path is absolute'],
    ['Read(/etc/passwd)', file('Read', '/etc/passwd'), false, 'docs: /path is from the project root, not absolute'],
    ['Read(~/.ssh/**)', file('Read', '/home/me/.ssh/id_rsa'), true, 'docs: ~/path is from the home directory'],
    ['Read(~/.ssh/**)', file('Read', '~/.ssh/id_rsa'), true, 'docs: ~/path is from the home directory'],
    ['Read(secrets/)', file('Read', '/home/me/project/a/secrets/key'), true, 'gitignore: a trailing / is the whole directory'],
    ['Read(*.pem)', { tool: 'Grep', input: { pattern: 'BEGIN', path: '/home/me/project/certs/x.pem' } }, true, 'docs: Read rules apply to Grep'],
    ['Read(src/**)', file('Edit', '/home/me/project/src/a.ts'), false, 'docs: a Read rule does not cover editing'],
    // WebFetch domains
    ['WebFetch(domain:example.com)', fetch('https://example.com/x'), true, 'docs: domain:'],
    ['WebFetch(domain:example.com)', fetch('https://api.example.com/x'), true, 'deny: subdomains too'],
    ['WebFetch(domain:example.com)', fetch('https://example.com.evil.io/'), false, 'docs: another domain'],
    ['WebFetch(domain:example.com)', fetch('https://notexample.com/'), false, 'docs: another domain'],
    ['WebFetch(domain:example.com)', bash('curl https://example.com'), false, 'docs: the rule names WebFetch'],
    ['WebFetch', fetch('https://anything.io'), true, 'docs: a bare tool name'],
    // MCP
    ['mcp__github', mcp('mcp__github__create_issue'), true, 'docs: mcp__server is every tool of the server'],
    ['mcp__github', mcp('mcp__githubx__create_issue'), false, 'docs: another server'],
    ['mcp__github__*', mcp('mcp__github__delete_repo'), true, 'docs: mcp__server__* is every tool of the server'],
    ['mcp__github__create_issue', mcp('mcp__github__create_issue'), true, 'docs: one tool'],
    ['mcp__github__create_issue', mcp('mcp__github__delete_repo'), false, 'docs: one tool'],
    // Other tools' specifiers
    ['Agent(Explore)', { tool: 'Agent', input: { subagent_type: 'Explore', prompt: 'look' } }, true, 'docs: Agent(name)'],
    ['Agent(Explore)', { tool: 'Agent', input: { subagent_type: 'Plan', prompt: 'look' } }, false, 'docs: Agent(name)'],
  ])('%s against %j → %s (%s)', (rule, use, expected) => {
    expect(ruleMatches(rule, use, scope)).toBe(expected);
  });

  it('names the first matching deny rule, and none when nothing matches', () => {
    expect(deniedBy(['Read(.env)', 'Bash(rm *)', 'Bash'], bash('rm -rf build'), scope)).toBe('Bash(rm *)');
    expect(deniedBy(['Write', 'Bash(git push:*)'], bash('git status'), scope)).toBeNull();
  });

  it('reads a directory with glob characters in it as a plain directory', () => {
    const odd: RuleScope = { cwd: '/work/[a]*', home: '/home/me' };
    expect(ruleMatches('Edit(src/**)', file('Edit', '/work/[a]*/src/x.ts'), odd)).toBe(true);
    expect(ruleMatches('Edit(src/**)', file('Edit', '/work/a-b/src/x.ts'), odd)).toBe(false);
  });

  it('denies by a path rule too long to judge (minimatch refuses patterns over 64 KiB) rather than guess', () => {
    expect(ruleMatches(`Read(${'x'.repeat(70_000)})`, file('Read', '/home/me/project/a'), scope)).toBe(true);
    expect(ruleMatches(`Read(${'x'.repeat(70_000)})`, { tool: 'Read', input: {} }, scope)).toBe(false);
  });

  it('denies a command with more readings than it tries (wrapper after wrapper) rather than guess', () => {
    expect(ruleMatches('Bash(rm -rf *)', bash(`${'env '.repeat(5)}rm -rf /`), scope)).toBe(true);
    expect(ruleMatches('Bash(rm -rf *)', bash(`${'env '.repeat(5)}ls`), scope)).toBe(false);
    expect(ruleMatches('Bash(rm -rf *)', bash(`${'env '.repeat(5000)}rm -rf /`), scope)).toBe(true);
    expect(ruleMatches('Bash(rm -rf *)', bash(`${'env '.repeat(5000)}ls`), scope)).toBe(true);
    expect(ruleMatches('Bash(rm -rf *)', bash(`ls; ${'env '.repeat(5000)}ls`), scope)).toBe(true);
  });
});
