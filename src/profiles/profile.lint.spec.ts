import { LintCode, LintContext, LintResult, lintProfile, looksLikeSecret } from './profile.lint';
import { ProfileDoc, normalizeDocument } from './profile.schema';
import { BUILTIN_PROFILES, BUILTIN_TEMPLATES } from './templates';

const SKILL_DIR_WITH_FILE = '/skills/present';

/** A clean version-2 profile; each case changes one thing. */
function profile(overrides: Partial<ProfileDoc> = {}): ProfileDoc {
  return { ...normalizeDocument({ name: 'Lint Me', version: 2 }), ...overrides };
}

function lint(doc: ProfileDoc, ctx: Partial<LintContext> = {}): LintResult {
  return lintProfile(doc, { shared: true, metadataKeys: [], skillFileExists: (p) => p === SKILL_DIR_WITH_FILE, ...ctx });
}

const codes = (r: LintResult) => ({ errors: r.errors.map((f) => f.code), warnings: r.warnings.map((f) => f.code) });
const findingsFor = (r: LintResult, code: LintCode) => [...r.errors, ...r.warnings].filter((f) => f.code === code);

type Case = { rule: LintCode; severity: 'error' | 'warning'; path: string; failing: () => LintResult; passing: () => LintResult };

const stdio = (extra: Record<string, unknown> = {}) => ({ type: 'stdio' as const, command: 'mcp-server', ...extra });

const CASES: Case[] = [
  {
    rule: 'bypass_permissions_shared',
    severity: 'error',
    path: 'permissions.mode',
    failing: () => lint(profile({ permissions: { mode: 'bypassPermissions', allow: [], deny: [], ask: [] } })),
    passing: () => lint(profile({ permissions: { mode: 'bypassPermissions', allow: [], deny: [], ask: [] } }), { shared: false }),
  },
  {
    rule: 'reserved_mcp_server_name',
    severity: 'error',
    path: 'tools.mcp_servers.brainstem',
    failing: () => lint(profile({ tools: { mcp_servers: { brainstem: stdio() } } })),
    passing: () => lint(profile({ tools: { mcp_servers: { 'brainstem-tools': stdio() } } })),
  },
  {
    rule: 'mcp_missing_command',
    severity: 'error',
    path: 'tools.mcp_servers.local.command',
    failing: () => lint(profile({ tools: { mcp_servers: { local: { type: 'stdio', args: ['x'] } } } })),
    passing: () => lint(profile({ tools: { mcp_servers: { local: stdio() } } })),
  },
  {
    rule: 'mcp_missing_url',
    severity: 'error',
    path: 'tools.mcp_servers.api.url',
    failing: () => lint(profile({ tools: { mcp_servers: { api: { type: 'http', url: null } } } })),
    passing: () => lint(profile({ tools: { mcp_servers: { api: { type: 'http', url: 'https://mcp.example.com/mcp' } } } })),
  },
  {
    rule: 'inline_secret',
    severity: 'error',
    path: 'tools.mcp_servers.gh.env.GITHUB_TOKEN',
    failing: () => lint(profile({ tools: { mcp_servers: { gh: stdio({ env: { GITHUB_TOKEN: 'ghp_' + 'a1B2c3D4e5'.repeat(4) } }) } } })),
    passing: () => lint(profile({ tools: { mcp_servers: { gh: stdio({ env: { GITHUB_TOKEN: '${GITHUB_TOKEN}', LOG_LEVEL: 'debug' } }) } } })),
  },
  {
    rule: 'inline_secret',
    severity: 'error',
    path: 'hooks.PreToolUse[0].command',
    failing: () => lint(profile({ hooks: { PreToolUse: [{ type: 'command', command: 'curl -H "x-api-key: sk-ant-api03-abcdefghijklmnopqrstuv" https://x', timeout: 60 }] } })),
    passing: () => lint(profile({ hooks: { PreToolUse: [{ type: 'command', command: 'curl -H "x-api-key: ${API_KEY}" https://x', timeout: 60 }] } })),
  },
  {
    rule: 'hook_handler_incomplete',
    severity: 'error',
    path: 'hooks.PostToolUse[0].url',
    failing: () => lint(profile({ hooks: { PostToolUse: [{ type: 'http', command: 'x', timeout: 60 }] } })),
    passing: () => lint(profile({ hooks: { PostToolUse: [{ type: 'http', url: 'http://127.0.0.1:9000/hook', timeout: 60 }] } })),
  },
  {
    rule: 'hook_handler_incomplete',
    severity: 'error',
    path: 'hooks.PreToolUse[0].prompt',
    failing: () => lint(profile({ hooks: { PreToolUse: [{ type: 'prompt', prompt: '', timeout: 60 }] } })),
    passing: () => lint(profile({ hooks: { PreToolUse: [{ type: 'prompt', prompt: 'Is this command safe?', timeout: 60 }] } })),
  },
  {
    rule: 'skill_source_unsupported',
    severity: 'warning',
    path: 'skills[0].source',
    failing: () => lint(profile({ skills: [{ name: 'review', source: 'git' }] })),
    passing: () => lint(profile({ skills: [{ name: 'review', source: 'local' }] })),
  },
  {
    rule: 'skill_missing_file',
    severity: 'error',
    path: 'skills[0].path',
    failing: () => lint(profile({ skills: [{ name: 'review', source: 'local', path: '/skills/absent' }] })),
    passing: () => lint(profile({ skills: [{ name: 'review', source: 'local', path: SKILL_DIR_WITH_FILE }] })),
  },
  {
    rule: 'unknown_builtin_tool',
    severity: 'warning',
    path: 'tools.builtin[1]',
    failing: () => lint(profile({ tools: { builtin: ['Read', 'Telepathy'] } })),
    passing: () => lint(profile({ tools: { builtin: ['Read', 'WebFetch'] } })),
  },
  {
    rule: 'tool_allowed_and_denied',
    severity: 'warning',
    path: 'tools.builtin[1]',
    failing: () => lint(profile({ tools: { builtin: ['Read', 'Bash'], deny: ['Bash'] } })),
    passing: () => lint(profile({ tools: { builtin: ['Read', 'Bash'], deny: ['Bash(rm *)'] } })),
  },
  {
    rule: 'version_outdated',
    severity: 'warning',
    path: 'version',
    failing: () => lint(profile({ version: 1 })),
    passing: () => lint(profile({ version: 2 })),
  },
  {
    rule: 'metadata_ignored',
    severity: 'warning',
    path: 'locked',
    failing: () => lint(profile(), { metadataKeys: ['locked'] }),
    passing: () => lint(profile(), { metadataKeys: [] }),
  },
  {
    rule: 'runtime_unsupported',
    severity: 'warning',
    path: 'permissions.allow[0]',
    failing: () => lint(profile({ runtime: 'codex', permissions: { mode: 'acceptEdits', allow: ['Bash(npm test)'], deny: [], ask: [] } })),
    passing: () => lint(profile({ runtime: 'claude-code', permissions: { mode: 'acceptEdits', allow: ['Bash(npm test)'], deny: [], ask: [] } })),
  },
  {
    rule: 'loops_off',
    severity: 'warning',
    path: 'loops',
    failing: () => lint(profile({ loops: { repeated_call: 0, alternation: 0, repeated_failure: 0, repeated_text: 0, no_progress_s: 0 } })),
    passing: () => lint(profile({ loops: { repeated_call: 0, alternation: 0, repeated_failure: 0, repeated_text: 0, no_progress_s: 1800 } })),
  },
  {
    rule: 'loop_threshold_trivial',
    severity: 'warning',
    path: 'loops.repeated_call',
    failing: () => lint(profile({ loops: { repeated_call: 1 } })),
    passing: () => lint(profile({ loops: { repeated_call: 8 } })),
  },
  {
    rule: 'inline_secret',
    severity: 'error',
    path: 'worktree.setup',
    failing: () => lint(profile({ isolation: 'worktree', worktree: { setup: 'TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123 npm ci' } })),
    passing: () => lint(profile({ isolation: 'worktree', worktree: { setup: 'npm ci' } })),
  },
  {
    rule: 'worktree_copy_refused',
    severity: 'error',
    path: 'worktree.copy[1]',
    failing: () => lint(profile({ worktree: { copy: ['.env', './.git/config'] } })),
    passing: () => lint(profile({ worktree: { copy: ['.env', '.github/local.yml'] } })),
  },
  {
    rule: 'sandbox_host_allowed_and_denied',
    severity: 'warning',
    path: 'sandbox.network.allow[1]',
    failing: () => lint(profile({ sandbox: { network: { allow: ['registry.npmjs.org', 'API.internal.example.com:443'], deny: ['*.internal.example.com'] } } })),
    passing: () => lint(profile({ sandbox: { network: { allow: ['registry.npmjs.org', 'internal.example.com:443'], deny: ['*.internal.example.com', 'internal.example.com:22'] } } })),
  },
  {
    rule: 'sandbox_host_allowed_and_denied',
    severity: 'warning',
    path: 'sandbox.network.allow[0]',
    failing: () => lint(profile({ sandbox: { network: { allow: ['github.com:22'], deny: ['*:22'] } } })),
    passing: () => lint(profile({ sandbox: { network: { allow: ['github.com:443'], deny: ['*:22'] } } })),
  },
  {
    rule: 'sandbox_host_too_broad',
    severity: 'warning',
    path: 'sandbox.network.allow[0]',
    failing: () => lint(profile({ sandbox: { network: { allow: ['*.co.uk'] } } })),
    passing: () => lint(profile({ sandbox: { network: { allow: ['*.example.co.uk', '*.github.com'] } } })),
  },
  {
    rule: 'sandbox_loopback_allowed',
    severity: 'warning',
    path: 'sandbox.network.allow[0]',
    failing: () => lint(profile({ sandbox: { network: { allow: ['127.0.0.1'] } } })),
    passing: () => lint(profile({ sandbox: { network: { allow: ['127.0.0.1:5432', 'localhost:3000', '[::1]:8080'] } } })),
  },
  {
    rule: 'sandbox_write_too_wide',
    severity: 'error',
    path: 'sandbox.allow_write[1]',
    failing: () => lint(profile({ sandbox: { allow_write: ['~/.npm', '~/'] } })),
    passing: () => lint(profile({ sandbox: { allow_write: ['~/.npm', '~/.cache/pip'] } })),
  },
  {
    rule: 'sandbox_write_too_wide',
    severity: 'error',
    path: 'sandbox.allow_write[0]',
    failing: () => lint(profile({ sandbox: { allow_write: ['~/.npm/../..'] } })),
    passing: () => lint(profile({ sandbox: { allow_write: ['~/.npm/../.cache'] } })),
  },
  {
    rule: 'sandbox_write_too_wide',
    severity: 'error',
    path: 'sandbox.allow_write[0]',
    failing: () => lint(profile({ sandbox: { allow_write: ['/home/'] } })),
    passing: () => lint(profile({ sandbox: { allow_write: ['/home/shared/cache', '/srv'] } })),
  },
  {
    rule: 'sandbox_write_too_wide',
    severity: 'error',
    path: 'sandbox.allow_write[0]',
    failing: () => lint(profile({ sandbox: { allow_write: ['/srv/..'] } })),
    passing: () => lint(profile({ sandbox: { allow_write: ['/srv/../tmp/build'] } })),
  },
  {
    rule: 'sandbox_hides_cwd',
    severity: 'warning',
    path: 'sandbox.deny_read[1]',
    failing: () => lint(profile({ sandbox: { deny_read: ['.env', './'] } })),
    passing: () => lint(profile({ sandbox: { deny_read: ['.env', './secrets'] } })),
  },
  {
    rule: 'sandbox_hides_cwd',
    severity: 'warning',
    path: 'sandbox.deny_read[0]',
    failing: () => lint(profile({ sandbox: { deny_read: ['../..'] } })),
    passing: () => lint(profile({ sandbox: { deny_read: ['../other-repo'] } })),
  },
  {
    rule: 'sandbox_hides_cwd',
    severity: 'warning',
    path: 'sandbox.deny_read[0]',
    failing: () => lint(profile({ sandbox: { deny_read: ['~'] } })),
    passing: () => lint(profile({ sandbox: { deny_read: ['~/.config/secrets'] } })),
  },
];

describe('profile lint: every rule fails and passes', () => {
  it.each(CASES.map((c) => [`${c.rule} at ${c.path}`, c] as const))('%s', (_name, c) => {
    // Given a profile that breaks the rule; When it is linted; Then exactly that finding is reported where expected
    const failing = c.failing();
    const list = c.severity === 'error' ? failing.errors : failing.warnings;
    expect(list).toEqual([{ path: c.path, code: c.rule, message: expect.any(String) }]);
    expect(failing.valid).toBe(c.severity !== 'error');
    // Given the same profile fixed; Then the rule is silent
    const passing = c.passing();
    expect(findingsFor(passing, c.rule)).toEqual([]);
    expect(passing.valid).toBe(true);
  });
});

describe('profile lint: runtime-specific gaps', () => {
  const hookOf = (type: 'command' | 'http' | 'prompt') => ({ type, command: 'x', url: 'http://h', prompt: 'p', timeout: 60 });

  it('warns that codex maps neither the built-in allowlist nor deny rules nor hooks, command hooks included', () => {
    // Given a codex profile with a command guard hook and an http hook; When linted; Then both events are flagged
    const r = lint(profile({ runtime: 'codex', tools: { builtin: ['Read'], deny: ['Bash'] }, hooks: { SessionStart: [hookOf('command')], PreToolUse: [hookOf('http')] } }));
    expect(r.warnings.map((w) => w.path)).toEqual(['tools.builtin', 'tools.deny[0]', 'hooks.SessionStart', 'hooks.PreToolUse']);
  });

  it("warns about no codex rule on the profile's own MCP servers (they become its approval settings), and about every other rule", () => {
    const r = lint(
      profile({
        runtime: 'codex',
        tools: { mcp_servers: { gh: stdio() }, deny: ['mcp__gh__delete_repo'] },
        permissions: { mode: 'default', allow: ['mcp__gh', 'Bash(npm test *)'], deny: ['mcp__gh__*'], ask: ['mcp__gh__create_issue', 'mcp__slack__post'] },
      }),
    );
    expect(r.warnings.map((w) => w.path)).toEqual(['permissions.allow[1]', 'permissions.ask[1]']);
  });

  it('warns that gemini-cli has no bypass mode in settings, no ask rules, and no "_" in server names', () => {
    const r = lint(
      profile({
        runtime: 'gemini-cli',
        permissions: { mode: 'bypassPermissions', allow: [], deny: [], ask: ['Bash'] },
        tools: { mcp_servers: { my_server: stdio() } },
      }),
      { shared: false },
    );
    expect(r.warnings.map((w) => w.path)).toEqual(['permissions.mode', 'permissions.ask', 'tools.mcp_servers.my_server']);
    expect(lint(profile({ runtime: 'gemini-cli', tools: { mcp_servers: { 'my-server': stdio() } } })).warnings).toEqual([]);
  });

  it('warns that opencode has no declarative hooks', () => {
    expect(codes(lint(profile({ runtime: 'opencode', hooks: { SessionStart: [hookOf('command')] } }))).warnings).toEqual(['runtime_unsupported']);
    expect(codes(lint(profile({ runtime: 'opencode' }))).warnings).toEqual([]);
  });

  it('warns that claude-code ignores Write(path) rules and non-command SessionStart handlers', () => {
    const r = lint(
      profile({
        runtime: 'claude-code',
        permissions: { mode: 'acceptEdits', allow: [], deny: ['Write(secrets/**)', 'Edit(secrets/**)'], ask: [] },
        tools: { deny: ['Write(.env)', 'Bash'] },
        hooks: { SessionStart: [hookOf('prompt')], PreToolUse: [hookOf('prompt')] },
      }),
    );
    expect(r.warnings.map((w) => w.path)).toEqual(['hooks.SessionStart[0].type', 'permissions.deny[0]', 'tools.deny[0]']);
  });
});

describe('secret detection', () => {
  it.each([
    'sk-proj-AbCdEfGhIjKlMnOpQrStUv',
    'AKIAIOSFODNN7EXAMPLE',
    'xoxb-1234567890-abcdefghij',
    'Bearer eyJhbGciOiJIUzI1NiJ9x7Qm2Lr9Vt4Kp8Zs1Wn6Yd3',
    '-----BEGIN OPENSSH PRIVATE KEY-----',
  ])('flags %s', (value) => expect(looksLikeSecret(value)).toBe(true));

  it.each([
    '${GITHUB_TOKEN}',
    '${API_KEY:-none}',
    '{env:OPENAI_API_KEY}',
    'npx -y @modelcontextprotocol/server-github',
    '3f786850e387550fdab836ed7e6dc881de23001b',
    '123e4567-e89b-12d3-a456-426614174000',
    '/usr/local/share/some/very/long/path/to/a/binary-name-here',
  ])('leaves %s alone', (value) => expect(looksLikeSecret(value)).toBe(false));
});

describe('built-in templates', () => {
  it('are the 8 built-in slugs; they and the main brain\'s profile lint clean as shared profiles', () => {
    expect(BUILTIN_TEMPLATES.map((t) => t.id)).toEqual([
      'coding-assistant', 'code-reviewer', 'researcher', 'security-auditor',
      'frontend-developer', 'documentation-writer', 'devops-engineer', 'pair-programmer',
    ]);
    for (const t of BUILTIN_PROFILES) expect([t.id, lint(t.doc)]).toEqual([t.id, { valid: true, errors: [], warnings: [] }]);
  });
});

describe('profile lint: on_limit.fallback_profile', () => {
  // Profiles by id, and each one's own fallback: `plain` has none, `chained` has one.
  const fallbacks: Record<string, string | null> = { plain: null, chained: 'plain' };
  const fallbackOf = (id: string) => (id in fallbacks ? fallbacks[id] : undefined);
  const withFallback = (id: string) => profile({ on_limit: { fallback_profile: id } });

  it('Given a fallback that exists and has none of its own, Then it lints clean', () => {
    expect(codes(lint(withFallback('plain'), { fallbackOf, selfId: 'mine' }))).toEqual({ errors: [], warnings: [] });
  });

  it('Given a fallback that does not exist, itself, or one with a fallback of its own, Then each is an error naming on_limit.fallback_profile', () => {
    for (const [id, code, says] of [
      ['missing', 'on_limit_unknown_profile', 'no profile "missing"'],
      ['mine', 'on_limit_chained', 'its own fallback'],
      ['chained', 'on_limit_chained', 'has a fallback of its own ("plain")'],
    ] as const) {
      const r = lint(withFallback(id), { fallbackOf, selfId: 'mine' });
      expect(r.errors).toEqual([{ path: 'on_limit.fallback_profile', code, message: expect.stringContaining(says) }]);
      expect(r.valid).toBe(false);
    }
  });

  it('Given a document linted on its own (no other profiles known), Then the reference is not judged', () => {
    expect(lint(withFallback('missing')).errors).toEqual([]);
  });
});
