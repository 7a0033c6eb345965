import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { DomainError } from '../../common/domain-error';
import { EMIT_RUNTIMES, EmitRuntime, emitProfile } from '../emitters';
import { ProfileDoc, parseProfileDocument } from '../profile.schema';
import { parseProfileYaml } from '../profile.yaml';
import { scanProfile } from '.';

const FIXTURES = join(__dirname, '../../../test/fixtures');
const SERVICE_URL = 'http://127.0.0.1:4820';
const UPDATE = process.env.UPDATE_SCAN_FIXTURES === '1';

function projectFiles(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || e.name === 'warnings.json') continue;
    const path = relative(dir, join(e.parentPath, e.name)).split('\\').join('/');
    files.set(path, readFileSync(join(dir, path), 'utf8'));
  }
  return files;
}

/** What applying the profile writes, as a path → content map. */
function emitted(runtime: EmitRuntime, profile: ProfileDoc, profileId: string): Map<string, string> {
  return new Map(emitProfile(runtime, profile, { profileId, serviceUrl: SERVICE_URL, skills: [] }).files.map((f) => [f.path, f.content]));
}

function sourceProfile(name: string): ProfileDoc {
  const yaml = parseProfileYaml(readFileSync(join(FIXTURES, 'scan', name, 'profile.yaml'), 'utf8'));
  if (!yaml.ok) throw new Error(yaml.error);
  const parsed = parseProfileDocument(yaml.value);
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  return parsed.doc;
}

const nothingFound = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e instanceof DomainError && e.code === 'scan_found_nothing' ? e.message : `wrong error: ${String(e)}`;
  }
  return 'no error';
};

describe('scan: the fixture project re-emits byte for byte', () => {
  describe.each(EMIT_RUNTIMES.map((r) => [r]))('%s', (runtime) => {
    const dir = join(FIXTURES, 'scan/billing-service', runtime);
    const source = sourceProfile('billing-service');

    if (UPDATE) {
      for (const [path, content] of emitted(runtime, source, 'billing-service')) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), content);
      }
    }

    it('the fixture is the source profile as emitted today (a stale one would round-trip just as well)', () => {
      expect(Object.fromEntries(projectFiles(dir))).toEqual(Object.fromEntries(emitted(runtime, source, 'billing-service')));
    });

    it('scan → profile → emit gives the fixture files, and nothing else', () => {
      const files = projectFiles(dir);
      const result = scanProfile(files, runtime, { projectDir: dir });
      expect(result).toMatchObject({ runtime, profileId: 'billing-service' });
      expect(result.warnings).toEqual([]);
      expect(Object.fromEntries(emitted(runtime, result.profile, result.profileId))).toEqual(Object.fromEntries(files));
    });

    it('recovers the source profile, except what the runtime cannot hold', () => {
      const { profile } = scanProfile(projectFiles(dir), runtime);
      if (runtime === 'gemini-cli' || runtime === 'opencode') {
        // Generic mappings: fewer fields survive (see the runtime's scanner); re-emission above is the contract.
        expect(profile).toMatchObject({ name: source.name, instructions: source.instructions, tools: { mcp_servers: source.tools.mcp_servers } });
        // gemini-cli keeps allow and deny rules on MCP servers (as tools.allowed, excludeTools and mcp.excluded).
        if (runtime === 'gemini-cli') {
          expect(profile.permissions.allow).toContain('mcp__postgres__query');
          expect(profile.permissions.deny).toContain('mcp__docs__publish');
        }
        return;
      }
      if (runtime === 'claude-code') {
        expect(profile).toEqual(source);
        return;
      }
      // codex writes no description, fallback, tool lists, hooks or rules other than on MCP servers: those cannot come back.
      const onMcp = (rules: string[]) => rules.filter((r) => r.startsWith('mcp__'));
      const { fallback: _dropped, ...model } = source.model;
      expect(profile).toEqual({
        ...source,
        runtime: 'codex',
        model,
        description: '',
        tools: { mcp_servers: source.tools.mcp_servers },
        permissions: { mode: source.permissions.mode, allow: onMcp(source.permissions.allow), deny: onMcp(source.permissions.deny), ask: onMcp(source.permissions.ask) },
        hooks: {},
      });
    });
  });
});

describe.each(EMIT_RUNTIMES.map((r) => [r]))('scan: every built-in template golden output round-trips (%s)', (runtime) => {
  const root = join(FIXTURES, 'golden', runtime);
  it.each(readdirSync(root).map((t) => [t]))('%s', (template) => {
    const files = projectFiles(join(root, template));
    const result = scanProfile(files, undefined);
    expect(result.runtime).toBe(runtime);
    expect(result.profileId).toBe(template);
    expect(Object.fromEntries(emitted(runtime, result.profile, result.profileId))).toEqual(Object.fromEntries(files));
  });
});

describe('scan: claude-code mapping details', () => {
  const settings = (value: unknown) => ['.claude/settings.json', JSON.stringify(value)] as const;

  it("reads claude's own sandbox back into the profile's section, leaving out what the profile cannot hold, with a warning each", () => {
    const files = new Map<string, string>([
      settings({
        sandbox: {
          enabled: true,
          autoAllowBashIfSandboxed: false,
          excludedCommands: ['docker'],
          filesystem: { allowWrite: ['~/.npm', 'src/*'], denyRead: ['.env'], denyWrite: ['x'] },
          network: { allowedDomains: ['registry.npmjs.org', '*'], deniedDomains: ['*:22'], allowLocalBinding: true },
        },
      }),
    ]);
    const result = scanProfile(files, 'claude-code', { projectDir: '/work/app' });
    expect(result.profile.sandbox).toEqual({ allow_write: ['~/.npm'], deny_read: ['.env'], network: { allow: ['registry.npmjs.org'], deny: ['*:22'] }, auto_allow_bash: false });
    expect(result.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining('sandbox.excludedCommands'),
      expect.stringContaining('sandbox.filesystem.denyWrite'),
      expect.stringContaining('sandbox.network.allowLocalBinding'),
      expect.stringContaining('sandbox.filesystem.allowWrite: "src/*" must name a folder or file'),
      expect.stringContaining('sandbox.network.allowedDomains: "*" may not be *'),
    ]);
  });

  it("given claude's sandbox not enabled, then no section is proposed, and it says so", () => {
    const result = scanProfile(new Map([settings({ sandbox: { enabled: false, network: { allowedDomains: ['x.example.com'] } } })]), 'claude-code', { projectDir: '/work/app' });
    expect(result.profile.sandbox).toBeUndefined();
    expect(result.warnings).toEqual([expect.objectContaining({ code: 'not_mapped', message: expect.stringContaining('not enabled') })]);
  });

  it('ignores the reserved brainstem server, keeps others, warns what a profile cannot hold', () => {
    const files = new Map<string, string>([
      settings({ permissions: { defaultMode: 'plan' }, env: { FOO: '1' }, hooks: { Stop: [] } }),
      [
        '.mcp.json',
        JSON.stringify({
          mcpServers: {
            brainstem: { type: 'http', url: 'http://x/mcp' },
            Brainstem: { type: 'http', url: 'http://x/mcp' },
            files: { command: 'mcp-files', args: ['--root', '.'] },
            api: { type: 'http', url: 'https://api/mcp', headers: { Authorization: 'Bearer x' } },
          },
        }),
      ],
    ]);
    const result = scanProfile(files, 'claude-code', { projectDir: '/work/my-app' });
    expect(result.profileId).toBe('my-app');
    expect(result.profile.name).toBe('My App');
    expect(result.profile.permissions.mode).toBe('plan');
    expect(result.profile.tools.mcp_servers).toEqual({ files: { type: 'stdio', command: 'mcp-files', args: ['--root', '.'] }, api: { type: 'http', url: 'https://api/mcp' } });
    expect(result.warnings.map((w) => `${w.code} ${w.path}`)).toEqual(['not_mapped .claude/settings.json', 'lossy .mcp.json', 'not_mapped .claude/settings.json']);
    expect(result.warnings[0].message).toContain('env');
    expect(result.warnings[2].message).toContain('hooks.Stop');
  });

  it('splits the agent\'s disallowedTools off permissions.deny only when they are its tail (the emitter appends them)', () => {
    const agent = '---\nname: a\ndescription: d\ndisallowedTools: Write, Edit\n---\nHi\n';
    const tail = scanProfile(new Map([settings({ permissions: { deny: ['Bash(rm *)', 'Write', 'Edit'] }, agent: 'a' }), ['.claude/agents/a.md', agent]]), 'claude-code');
    expect(tail.profile.permissions.deny).toEqual(['Bash(rm *)']);
    expect(tail.profile.tools.deny).toEqual(['Write', 'Edit']);
    const mixed = scanProfile(new Map([settings({ permissions: { deny: ['Write', 'Bash(rm *)', 'Edit'] }, agent: 'a' }), ['.claude/agents/a.md', agent]]), 'claude-code');
    expect(mixed.profile.permissions.deny).toEqual(['Write', 'Bash(rm *)', 'Edit']);
    expect(emitted('claude-code', mixed.profile, 'a').get('.claude/settings.json')).toContain('"Write",\n      "Bash(rm *)",\n      "Edit"');
  });

  it('reads an agent without settings, rule files from elsewhere, and hooks without a timeout', () => {
    const files = new Map<string, string>([
      ['.claude/agents/zeta.md', '---\nname: zeta\ntools: [Read, Grep]\n---\nBe brief.\n\n@docs/a.md\n@docs/b.md\n'],
      ['.claude/agents/alpha.md', '---\nname: alpha\n---\n'],
      ['.claude/rules/style.md', '---\npaths: "src/**"\n---\nUse tabs.\n'],
      ['.claude/rules/broken.md', 'no frontmatter'],
    ]);
    const result = scanProfile(files, undefined);
    expect(result.profileId).toBe('alpha');
    expect(result.warnings.map((w) => w.code)).toEqual(['ambiguous', 'not_mapped', 'lossy']);
    const zeta = scanProfile(new Map([...files, settings({ agent: 'zeta', hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'x' }, { type: 'agent' }] }] } })]), undefined);
    expect(zeta.profile.instructions).toEqual({ system_prompt: 'Be brief.', files: ['docs/a.md', 'docs/b.md'], rules: [{ glob: 'src/**', instruction: 'Use tabs.' }] });
    expect(zeta.profile.tools.builtin).toEqual(['Read', 'Grep']);
    expect(zeta.profile.hooks).toEqual({ PreToolUse: [{ type: 'command', command: 'x', timeout: 60 }] });
  });

  it('orders the own rule files of an agent named with regex syntax by number, matching its name as written', () => {
    const rule = (glob: string, text: string) => `---\npaths: "${glob}"\n---\n${text}\n`;
    // Given an agent c++ (which a pattern built from the name could not even compile) with numbered rules, and another rule
    const cpp = scanProfile(
      new Map([
        ['.claude/agents/c++.md', '---\nname: c++\n---\n'],
        ['.claude/rules/c++-2.md', rule('b/**', 'Second.')],
        ['.claude/rules/c++-1.md', rule('a/**', 'First.')],
        ['.claude/rules/cc-0.md', rule('c/**', 'Other.')],
      ]),
      'claude-code',
    );
    // Then its own rules come first in order of n, the other one after them with a warning
    expect(cpp.profile.instructions.rules?.map((r) => r.instruction)).toEqual(['First.', 'Second.', 'Other.']);
    expect(cpp.warnings.filter((w) => w.code === 'lossy').map((w) => w.path)).toEqual(['.claude/rules/cc-0.md']);
    // And for an agent a.b, a rule axb-1 is not its own (the dot is a dot)
    const dotted = scanProfile(
      new Map([
        ['.claude/agents/a.b.md', '---\nname: a.b\n---\n'],
        ['.claude/rules/axb-1.md', rule('x/**', 'Not own.')],
        ['.claude/rules/a.b-1.md', rule('y/**', 'Own.')],
      ]),
      'claude-code',
    );
    expect(dotted.profile.instructions.rules?.map((r) => r.instruction)).toEqual(['Own.', 'Not own.']);
    expect(dotted.warnings.filter((w) => w.code === 'lossy').map((w) => w.path)).toEqual(['.claude/rules/axb-1.md']);
  });

  it('refuses a project without runtime files, or without the named runtime\'s', () => {
    expect(nothingFound(() => scanProfile(new Map([['README.md', 'x']]), undefined))).toContain('no runtime files found');
    expect(nothingFound(() => scanProfile(new Map([['AGENTS.md', 'x']]), 'claude-code'))).toContain('no claude-code files');
    expect(nothingFound(() => scanProfile(new Map([['AGENTS.md', 'x']]), 'gemini-cli'))).toContain('no gemini-cli files');
  });

  it('warns a malformed settings.json instead of failing', () => {
    const result = scanProfile(new Map([['.claude/settings.json', '{ nope'], ['.claude/agents/a.md', '---\nname: a\n---\nHi\n']]), 'claude-code');
    expect(result.profileId).toBe('a');
    expect(result.warnings[0]).toMatchObject({ code: 'malformed', path: '.claude/settings.json' });
  });
});

describe('scan: codex mapping details', () => {
  it('maps approval policy and sandbox back to the mode that re-emits them', () => {
    const modes = ['on-request|read-only', 'on-request|workspace-write', 'never|workspace-write', 'never|danger-full-access'].map((pair) => {
      const [approval, sandbox] = pair.split('|');
      const files = new Map([['.codex/config.toml', `approval_policy = "${approval}"\nsandbox_mode = "${sandbox}"\n`]]);
      const { profile } = scanProfile(files, 'codex');
      expect(emitted('codex', profile, 'x').get('.codex/config.toml')).toContain(`approval_policy = "${approval}"\nsandbox_mode = "${sandbox}"`);
      return profile.permissions.mode;
    });
    expect(modes).toEqual(['default', 'acceptEdits', 'dontAsk', 'bypassPermissions']);
  });

  it('reads a hand-written AGENTS.md as the system prompt', () => {
    const result = scanProfile(new Map([['AGENTS.md', '# Rules\n\nRun the tests.\n']]), undefined, { projectDir: '/src/shop' });
    expect(result).toMatchObject({ runtime: 'codex', profileId: 'shop', profile: { name: 'Shop', instructions: { system_prompt: '# Rules\n\nRun the tests.' } } });
    expect(result.warnings.map((w) => w.code)).toEqual(['lossy']);
  });

  it('reads the profile block and leaves the rest of AGENTS.md to the project', () => {
    const agents = '# Project notes\n\n<!-- brainstem:profile ops begin -->\n# Ops Bot\n\nKeep it running.\n<!-- brainstem:profile ops end -->\n';
    const result = scanProfile(new Map([['AGENTS.md', agents], ['.codex/config.toml', 'model = "gpt-5"\n[mcp_servers.brainstem]\nurl = "http://x/mcp"\n']]), 'codex');
    expect(result).toMatchObject({ profileId: 'ops', profile: { name: 'Ops Bot', model: { model: 'gpt-5' }, instructions: { system_prompt: 'Keep it running.' } } });
    expect(result.profile.tools.mcp_servers).toBeUndefined();
    expect(result.warnings.map((w) => w.code)).toEqual(['lossy']);
  });

  it("reads a server's approval settings back as MCP rules, the approval bypassPermissions implies as none, and warns an unknown one", () => {
    const config = (policy: string) =>
      `approval_policy = "${policy}"\nsandbox_mode = "danger-full-access"\n` +
      '[mcp_servers.gh]\ncommand = "gh-mcp"\ndefault_tools_approval_mode = "approve"\ndisabled_tools = ["delete_repo"]\n' +
      '[mcp_servers.gh.tools.create_issue]\napproval_mode = "prompt"\n[mcp_servers.gh.tools.search]\napproval_mode = "auto"\n' +
      '[mcp_servers.docs]\nurl = "https://docs.example/mcp"\nenabled = false\ndefault_tools_approval_mode = "sometimes"\n';
    const asked = scanProfile(new Map([['.codex/config.toml', config('on-request')]]), 'codex');
    expect(asked.profile.permissions).toEqual({ mode: 'acceptEdits', allow: ['mcp__gh'], ask: ['mcp__gh__create_issue'], deny: ['mcp__gh__delete_repo', 'mcp__docs'] });
    expect(asked.warnings).toContainEqual(expect.objectContaining({ code: 'not_mapped', message: expect.stringContaining('default_tools_approval_mode sometimes is not known') }));
    const bypass = scanProfile(new Map([['.codex/config.toml', config('never')]]), 'codex');
    expect(bypass.profile.permissions).toMatchObject({ mode: 'bypassPermissions', allow: [] });
    expect(emitted('codex', bypass.profile, 'x').get('.codex/config.toml')).toContain('[mcp_servers.gh]\ncommand = "gh-mcp"\nargs = []\ndefault_tools_approval_mode = "approve"');
  });
});

describe('scan: gemini-cli and opencode mapping details', () => {
  it('reads allowed and excluded MCP tools and servers back as rules on the declared servers, the longest name first, and warns the rest', () => {
    const settings = {
      tools: { allowed: ['mcp_gh_list_issues', 'mcp_gh_enterprise_*', 'mcp_slack_post', 'mcp_gh_create_*'] },
      mcpServers: { gh: { command: 'gh-mcp', excludeTools: ['delete_repo'] }, gh_enterprise: { httpUrl: 'https://x/mcp' }, docs: { httpUrl: 'https://d/mcp' } },
      mcp: { excluded: ['docs', 'nowhere'] },
    };
    const { profile, warnings } = scanProfile(new Map([['.gemini/settings.json', JSON.stringify(settings)]]), 'gemini-cli');
    expect(profile.permissions.allow).toEqual(['mcp__gh__list_issues', 'mcp__gh_enterprise']);
    expect(profile.permissions.deny).toEqual(['mcp__gh__delete_repo', 'mcp__docs']);
    const messages = warnings.map((w) => w.message).join('\n');
    expect(messages).toContain('tools.allowed: mcp_slack_post, mcp_gh_create_* has no profile rule');
    expect(messages).toContain('mcp.excluded: nowhere is not a declared server');
  });

  it('gemini-cli: tool names back to Claude names, millisecond timeouts rounded up to seconds, no approval mode read as default', () => {
    const settings = { tools: { core: ['read_file', 'replace', 'mystery_tool'], exclude: ['run_shell_command'] }, hooks: { BeforeTool: [{ hooks: [{ type: 'command', command: 'x', timeout: 1500 }] }] } };
    const result = scanProfile(new Map([['.gemini/settings.json', JSON.stringify(settings)]]), undefined);
    expect(result.runtime).toBe('gemini-cli');
    expect(result.profile.tools.builtin).toEqual(['Read', 'Edit']);
    expect(result.profile.permissions).toMatchObject({ mode: 'default', deny: ['Bash'] });
    expect(result.profile.hooks).toEqual({ PreToolUse: [{ type: 'command', command: 'x', timeout: 2 }] });
    expect(result.warnings.map((w) => w.code)).toEqual(['lossy', 'not_mapped', 'lossy']);
  });

  it('gemini-cli: tools.allowed scans back to allow rules, a command prefix to a Bash prefix rule', () => {
    const settings = { tools: { allowed: ['run_shell_command(git log)', 'read_file', 'run_shell_command'] } };
    const result = scanProfile(new Map([['.gemini/settings.json', JSON.stringify(settings)]]), undefined);
    expect(result.profile.permissions.allow).toEqual(['Bash(git log *)', 'Read', 'Bash']);
  });

  it('gemini-cli: grep_search and its old name search_file_content both scan to Grep', () => {
    for (const name of ['grep_search', 'search_file_content']) {
      const result = scanProfile(new Map([['.gemini/settings.json', JSON.stringify({ tools: { core: ['read_file', name] } })]]), undefined);
      expect(result.profile.tools.builtin).toEqual(['Read', 'Grep']);
    }
  });

  it('opencode: the best-fitting mode plus rules; patterns out of allow/ask/deny order are warned', () => {
    const agent = "---\ndescription: d\npermission:\n  edit: ask\n  bash:\n    '*': ask\n    rm *: deny\n    ls *: allow\n  webfetch: allow\n---\nHi\n";
    const result = scanProfile(new Map([['.opencode/agent/ops.md', agent]]), undefined);
    expect(result).toMatchObject({ runtime: 'opencode', profileId: 'ops' });
    expect(result.profile.permissions).toEqual({ mode: 'acceptEdits', allow: ['Bash(ls *)'], ask: ['Edit'], deny: ['Bash(rm *)'] });
    expect(result.warnings.map((w) => w.code)).toEqual(['lossy']);
  });

  it("opencode: keys on the MCP servers' tools come back as mcp__ rules; another order, a bad action or another server's key is warned", () => {
    // Given an agent with keys on its servers' tools (deny before ask, one not an action) and on a server it lacks
    const config = JSON.stringify({ default_agent: 'ops', mcp: { gh: { type: 'local', command: ['gh-mcp'] }, gh_admin: { type: 'local', command: ['gh-admin'] } } });
    const agent = "---\ndescription: d\npermission:\n  edit: allow\n  gh_*: allow\n  gh_admin_drop: deny\n  gh_create_issue: ask\n  gh_close: maybe\n  slack_post: deny\n---\nHi\n";
    // When scanned
    const result = scanProfile(new Map([['opencode.json', config], ['.opencode/agent/ops.md', agent]]), undefined);
    // Then each key is a rule on the server it names (the longest that fits), and the rest is warned
    expect(result.profile.permissions).toEqual({ mode: 'acceptEdits', allow: ['mcp__gh'], ask: ['mcp__gh__create_issue'], deny: ['mcp__gh_admin__drop'] });
    expect(result.warnings.map((w) => [w.code, w.message])).toEqual([
      ['not_mapped', expect.stringContaining('slack_post')],
      ['lossy', 'permission gh_create_issue: MCP tool keys are re-emitted allow, ask, deny; this order changes'],
      ['malformed', 'permission gh_close: maybe is not allow|ask|deny; ignored'],
    ]);
  });

  it('env references come back as ${VAR} from every runtime, re-emitting the same files', () => {
    // Given a profile whose server takes its token by reference
    const yaml = parseProfileYaml("name: Refs\ntools: {mcp_servers: {gh: {type: stdio, command: gh-mcp, args: ['--token', '${GH_TOKEN}'], env: {GH_TOKEN: '${GH_TOKEN}'}}}}\n");
    const parsed = yaml.ok ? parseProfileDocument(yaml.value) : null;
    if (!parsed?.ok) throw new Error('fixture');
    for (const runtime of ['codex', 'opencode'] as const) {
      // When emitted, scanned and emitted again; Then the env is the profile's, and the files are the same
      const files = emitted(runtime, parsed.doc, 'refs');
      const scanned = scanProfile(files, runtime);
      expect(scanned.profile.tools.mcp_servers?.gh.env).toEqual({ GH_TOKEN: '${GH_TOKEN}' });
      const again = parseProfileDocument({ ...scanned.profile, runtime });
      if (!again.ok) throw new Error(again.errors.join('; '));
      expect(emitted(runtime, again.doc, 'refs')).toEqual(files);
    }
  });

  it('detection prefers a runtime\'s own config over the shared-looking AGENTS.md and .mcp.json', () => {
    const opencode = '{"default_agent":"x","mcp":{}}';
    expect(scanProfile(new Map([['AGENTS.md', 'Be kind.'], ['opencode.json', opencode]]), undefined).runtime).toBe('opencode');
    expect(scanProfile(new Map([['.mcp.json', '{}'], ['.codex/config.toml', 'model = "m"']]), 'auto').runtime).toBe('codex');
  });
});
