import { load } from 'js-yaml';
import { parse as parseToml } from 'smol-toml';
import { normalizeDocument } from '../profile.schema';
import { emitProfile } from './index';

const CTX = { profileId: 'rich', serviceUrl: 'http://127.0.0.1:4820/', skills: [{ name: 'lint', files: [{ path: 'SKILL.md', content: '---\nname: lint\n---\n' }] }] };

/** A profile that uses every mapped field. */
const RICH = normalizeDocument({
  name: 'Rich',
  description: 'Uses everything',
  model: { model: 'claude-opus-4-8', provider: 'anthropic', fallback: ['claude-sonnet-4-6', 'claude-haiku-4-5'], options: { effort: 'high' } },
  instructions: { system_prompt: 'Be careful.', files: ['docs/STYLE.md'], rules: [{ glob: 'src/**/*.ts', instruction: 'No any.' }] },
  tools: {
    builtin: ['Read', 'Bash'],
    deny: ['WebFetch'],
    mcp_servers: { github: { type: 'stdio', command: 'npx', args: ['-y', 'gh-mcp'], env: { GH_TOKEN: '${GH_TOKEN}' } }, docs: { type: 'http', url: 'https://docs.example/mcp' } },
  },
  permissions: { mode: 'acceptEdits', allow: ['Bash(npm test *)'], deny: ['Bash(rm *)'], ask: ['Bash(git push *)'] },
  skills: [{ name: 'lint', source: 'local' }],
  hooks: {
    SessionStart: [
      { type: 'command', command: './start.sh', timeout: 10 },
      { type: 'http', url: 'https://hooks.example/start', timeout: 5 },
    ],
    PreToolUse: [
      { type: 'command', command: './guard.sh', matcher: 'Bash', timeout: 30 },
      { type: 'prompt', prompt: 'Is this safe?', matcher: 'Bash', timeout: 20 },
    ],
  },
});

const file = (runtime: Parameters<typeof emitProfile>[0], path: string) => {
  const result = emitProfile(runtime, RICH, CTX);
  return { content: result.files.find((f) => f.path === path)!.content, warnings: result.warnings };
};

describe('claude-code emitter', () => {
  it('maps permissions (tools.deny merged into deny), hooks grouped by matcher, model and effort', () => {
    // Given the rich profile; When emitted; Then settings.json carries each mapped field
    const settings = JSON.parse(file('claude-code', '.claude/settings.json').content);
    expect(settings.permissions).toEqual({ defaultMode: 'acceptEdits', allow: ['Bash(npm test *)', 'mcp__brainstem'], deny: ['Bash(rm *)', 'WebFetch'], ask: ['Bash(git push *)'] });
    expect(settings.model).toBe('claude-opus-4-8');
    expect(settings.effortLevel).toBe('high');
    expect(settings.hooks.PreToolUse).toEqual([
      { matcher: 'Bash', hooks: [{ type: 'command', command: './guard.sh', timeout: 30 }, { type: 'prompt', prompt: 'Is this safe?', timeout: 20 }] },
    ]);
  });

  it.each([['mcp__brainstem'], ['mcp__brainstem__*']])("given a profile that denies all of Brainstem's tools (%s), then they are not allowed up front and the deny stays", (rule) => {
    // Given a profile denying the reserved server; When emitted; Then its tools are denied and not allowed
    const doc = normalizeDocument({ name: 'Quiet', permissions: { mode: 'default', allow: ['Read'], deny: [rule], ask: [] } });
    const settings = JSON.parse(emitProfile('claude-code', doc, CTX).files.find((f) => f.path === '.claude/settings.json')!.content);
    expect(settings.permissions).toEqual({ defaultMode: 'default', allow: ['Read'], deny: [rule] });
  });

  it("given a profile that denies one of Brainstem's tools, then the others are still allowed up front and that one stays denied", () => {
    const doc = normalizeDocument({ name: 'No prompt tool', permissions: { mode: 'default', allow: [], deny: ['mcp__brainstem__permission_prompt'], ask: [] } });
    const settings = JSON.parse(emitProfile('claude-code', doc, CTX).files.find((f) => f.path === '.claude/settings.json')!.content);
    expect(settings.permissions).toEqual({ defaultMode: 'default', allow: ['mcp__brainstem'], deny: ['mcp__brainstem__permission_prompt'] });
  });

  const settingsOf = (doc: ReturnType<typeof normalizeDocument>) => JSON.parse(emitProfile('claude-code', doc, CTX).files.find((f) => f.path === '.claude/settings.json')!.content);

  it("given a profile with a sandbox section, then claude's own sandbox is on with its paths, hosts and Bash auto-allow, and no permission rule is added", () => {
    // Given a section setting every field; When emitted; Then settings.sandbox carries each in claude's names
    const doc = normalizeDocument({
      name: 'Boxed',
      permissions: { mode: 'default', allow: ['Read'], deny: [], ask: [] },
      sandbox: { allow_write: ['~/.npm', '/srv/cache', 'build', '~'], deny_read: ['.env'], network: { allow: ['registry.npmjs.org', '[::1]:5432'], deny: ['*:22'] }, auto_allow_bash: false },
    });
    const settings = settingsOf(doc);
    expect(settings.sandbox).toEqual({
      enabled: true,
      autoAllowBashIfSandboxed: false,
      filesystem: { allowWrite: ['~/.npm', '/srv/cache', 'build', '~/'], denyRead: ['.env'] },
      network: { allowedDomains: ['registry.npmjs.org', '[::1]:5432'], deniedDomains: ['*:22'] },
    });
    expect(settings.permissions).toEqual({ defaultMode: 'default', allow: ['Read', 'mcp__brainstem'] });
  });

  it('given a section that sets nothing, then the sandbox is on with Bash auto-allowed (the default) and no empty lists', () => {
    expect(settingsOf(normalizeDocument({ name: 'Boxed', sandbox: {} })).sandbox).toEqual({ enabled: true, autoAllowBashIfSandboxed: true });
    expect(settingsOf(normalizeDocument({ name: 'Hosts', sandbox: { network: { deny: ['x.example.com'] } } })).sandbox).toEqual({
      enabled: true,
      autoAllowBashIfSandboxed: true,
      network: { deniedDomains: ['x.example.com'] },
    });
  });

  it("given a profile without a sandbox section, then claude's sandbox is left to the user's own settings", () => {
    expect(settingsOf(normalizeDocument({ name: 'Plain' }))).not.toHaveProperty('sandbox');
  });

  it.each(['codex', 'gemini-cli', 'opencode'] as const)('given a sandbox section, then %s writes nothing of it and warns of nothing (it applies in Brainstem\'s sandbox)', (runtime) => {
    const boxed = normalizeDocument({ name: 'Boxed', sandbox: { network: { allow: ['x.example.com'] } } });
    const plain = normalizeDocument({ name: 'Boxed' });
    expect(emitProfile(runtime, boxed, CTX)).toEqual(emitProfile(runtime, plain, CTX));
  });

  it('keeps only command handlers on SessionStart and warns about the skipped one', () => {
    const { content, warnings } = file('claude-code', '.claude/settings.json');
    expect(JSON.parse(content).hooks.SessionStart).toEqual([{ hooks: [{ type: 'command', command: './start.sh', timeout: 10 }] }]);
    expect(warnings).toContainEqual({ code: 'hook_skipped', message: expect.stringContaining('hooks.SessionStart[1]') });
  });

  it('uses the model with the first fallback as its fallback, warns that later ones are ignored, and uses the first fallback when no model is set', () => {
    const { content, warnings } = file('claude-code', '.claude/settings.json');
    expect(JSON.parse(content)).toMatchObject({ model: 'claude-opus-4-8', fallbackModel: ['claude-sonnet-4-6'] });
    expect(warnings).toContainEqual({ code: 'fallback_ignored', message: expect.stringContaining('claude-haiku-4-5') });
    const noModel = normalizeDocument({ name: 'F', model: { fallback: ['sonnet'] } });
    const settings = JSON.parse(emitProfile('claude-code', noModel, CTX).files[0].content);
    expect(settings.model).toBe('sonnet');
    expect(settings.fallbackModel).toBeUndefined();
  });

  it('writes the agent file with frontmatter and @file references, MCP servers with the reserved one, rules and skills', () => {
    const agent = file('claude-code', '.claude/agents/rich.md').content;
    const [, head, body] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(agent)!;
    expect(load(head)).toEqual({ name: 'rich', description: 'Uses everything', tools: 'Read, Bash', disallowedTools: 'WebFetch', model: 'claude-opus-4-8', permissionMode: 'acceptEdits', skills: ['lint'] });
    expect(body).toBe('Be careful.\n\n@docs/STYLE.md\n');
    expect(JSON.parse(file('claude-code', '.mcp.json').content).mcpServers).toEqual({
      github: { type: 'stdio', command: 'npx', args: ['-y', 'gh-mcp'], env: { GH_TOKEN: '${GH_TOKEN}' } },
      docs: { type: 'http', url: 'https://docs.example/mcp' },
      brainstem: { type: 'http', url: 'http://127.0.0.1:4820/mcp', headers: { 'X-Brainstem-Session': '${BRAINSTEM_SESSION_ID:-}', Authorization: 'Bearer ${BRAINSTEM_TOKEN:-}' } },
    });
    expect(file('claude-code', '.claude/rules/rich-1.md').content).toBe("---\npaths:\n  - src/**/*.ts\n---\nNo any.\n");
    expect(file('claude-code', '.claude/skills/lint/SKILL.md').content).toBe('---\nname: lint\n---\n');
  });
});

describe('codex emitter', () => {
  it('writes model, reasoning effort, mode and MCP servers as TOML, and warns about what it cannot map', () => {
    const { content, warnings } = file('codex', '.codex/config.toml');
    expect(parseToml(content)).toEqual({
      model: 'claude-opus-4-8',
      model_reasoning_effort: 'high',
      approval_policy: 'on-request',
      sandbox_mode: 'workspace-write',
      mcp_servers: {
        github: { command: 'npx', args: ['-y', 'gh-mcp'], env_vars: ['GH_TOKEN'] },
        docs: { url: 'https://docs.example/mcp' },
        brainstem: {
          url: 'http://127.0.0.1:4820/mcp',
          bearer_token_env_var: 'BRAINSTEM_TOKEN',
          env_http_headers: { 'X-Brainstem-Session': 'BRAINSTEM_SESSION_ID' },
          default_tools_approval_mode: 'approve',
        },
      },
    });
    const messages = warnings.map((w) => w.message).join('\n');
    for (const gap of ['built-in tool allowlist', 'allow rules', 'deny rules', 'ask rules', 'model_provider', 'hooks.PreToolUse', 'fallback', 'skill lint']) expect(messages).toContain(gap);
  });

  it('forwards an env reference under its own name as env_vars, keeps literals, and leaves out what codex cannot express', () => {
    // Given env values: a same-name reference, a literal, a reference to another variable
    const doc = normalizeDocument({ name: 'E', tools: { mcp_servers: { gh: { type: 'stdio', command: 'gh-mcp', env: { GH_TOKEN: '${GH_TOKEN}', MODE: 'ro', API_KEY: '${OTHER_KEY}' } } } } });
    // When emitted for codex; Then codex gets no literal "${...}" text
    const result = emitProfile('codex', doc, CTX);
    expect((parseToml(result.files[0].content) as { mcp_servers: Record<string, unknown> }).mcp_servers.gh).toEqual({ command: 'gh-mcp', args: [], env: { MODE: 'ro' }, env_vars: ['GH_TOKEN'] });
    expect(result.warnings).toContainEqual({ code: 'not_mapped', message: expect.stringContaining('env API_KEY refers to another variable (${OTHER_KEY})') });
  });

  describe('rules on the profile\'s MCP servers', () => {
    const servers = { gh: { type: 'stdio' as const, command: 'gh-mcp' }, docs: { type: 'http' as const, url: 'https://docs.example/mcp' } };
    const emitMcp = (mode: 'default' | 'bypassPermissions', rules: { allow?: string[]; ask?: string[]; deny?: string[] }) => {
      const doc = normalizeDocument({ name: 'M', tools: { mcp_servers: servers }, permissions: { mode, allow: rules.allow ?? [], deny: rules.deny ?? [], ask: rules.ask ?? [] } });
      const result = emitProfile('codex', doc, CTX);
      return { servers: (parseToml(result.files[0].content) as { mcp_servers: Record<string, unknown> }).mcp_servers, warnings: result.warnings.map((w) => w.message) };
    };

    it('given allow, ask and deny rules on a tool and on a whole server, then each becomes that server\'s approval setting and only the other rules are warned', () => {
      const { servers: out, warnings } = emitMcp('default', {
        allow: ['mcp__gh__list_issues', 'mcp__docs', 'Bash(npm test *)'],
        ask: ['mcp__gh__create_issue', 'mcp__slack__post'],
        deny: ['mcp__gh__delete_repo', 'mcp__docs__publish'],
      });
      expect(out.gh).toEqual({
        command: 'gh-mcp',
        args: [],
        tools: { list_issues: { approval_mode: 'approve' }, create_issue: { approval_mode: 'prompt' } },
        disabled_tools: ['delete_repo'],
      });
      expect(out.docs).toEqual({ url: 'https://docs.example/mcp', default_tools_approval_mode: 'approve', disabled_tools: ['publish'] });
      expect(warnings).toContain('codex does not map fine-grained allow rules: Bash(npm test *)');
      expect(warnings).toContain('codex does not map fine-grained ask rules: mcp__slack__post');
      expect(warnings.join('\n')).not.toContain('deny rules');
    });

    it('given a tool both allowed and asked about, and a whole server denied, then ask wins over allow and the server is turned off', () => {
      const { servers: out } = emitMcp('default', { allow: ['mcp__gh__create_issue', 'mcp__docs'], ask: ['mcp__gh__create_issue'], deny: ['mcp__docs__*'] });
      expect(out.gh).toMatchObject({ tools: { create_issue: { approval_mode: 'prompt' } } });
      expect(out.docs).toMatchObject({ enabled: false });
    });

    it('given bypassPermissions, then every server\'s tools are approved, except what a rule asks about', () => {
      const { servers: out } = emitMcp('bypassPermissions', { ask: ['mcp__docs'] });
      expect(out.gh).toMatchObject({ default_tools_approval_mode: 'approve' });
      expect(out.docs).toMatchObject({ default_tools_approval_mode: 'prompt' });
    });
  });

  it('puts the instructions and path rules in a marked AGENTS.md block', () => {
    expect(file('codex', 'AGENTS.md').content).toBe(
      '<!-- brainstem:profile rich begin -->\n# Rich\n\nBe careful.\n\nAlso read these files:\n- docs/STYLE.md\n\n## Path rules\n- When working on files matching `src/**/*.ts`: No any.\n<!-- brainstem:profile rich end -->\n',
    );
  });
});

describe('gemini-cli emitter', () => {
  it("maps rules on the profile's MCP servers: allow as tools.allowed, a denied tool in its server's excludeTools, a denied server in mcp.excluded", () => {
    const doc = normalizeDocument({
      name: 'M',
      tools: { mcp_servers: { gh: { type: 'stdio', command: 'gh-mcp' }, docs: { type: 'http', url: 'https://docs.example/mcp' }, wiki: { type: 'http', url: 'https://wiki.example/mcp' } } },
      permissions: { mode: 'default', allow: ['mcp__gh__list_issues', 'mcp__docs__*', 'mcp__slack__post'], deny: ['mcp__gh__delete_repo', 'mcp__wiki'], ask: [] },
    });
    const result = emitProfile('gemini-cli', doc, CTX);
    const settings = JSON.parse(result.files[0].content);
    expect(settings.tools).toEqual({ allowed: ['mcp_gh_list_issues', 'mcp_docs_*'] });
    expect(settings.mcpServers.gh).toEqual({ command: 'gh-mcp', args: [], excludeTools: ['delete_repo'] });
    expect(settings.mcp).toEqual({ excluded: ['wiki'] });
    const messages = result.warnings.map((w) => w.message).join('\n');
    expect(messages).toContain('allow rules are not mapped: mcp__slack__post');
    expect(messages).not.toContain('mcp__gh__delete_repo');
  });

  it('maps hooks to BeforeTool with timeouts in milliseconds, command handlers only', () => {
    const { content, warnings } = file('gemini-cli', '.gemini/settings.json');
    const settings = JSON.parse(content);
    expect(settings.hooks).toEqual({
      SessionStart: [{ hooks: [{ type: 'command', command: './start.sh', timeout: 10000 }] }],
      BeforeTool: [{ matcher: 'run_shell_command', hooks: [{ type: 'command', command: './guard.sh', timeout: 30000 }] }],
    });
    expect(warnings.filter((w) => w.code === 'hook_skipped')).toHaveLength(2);
    expect(settings.general).toEqual({ defaultApprovalMode: 'auto_edit' });
    // The allowlist lets through the tools of the profile's MCP servers and of the reserved one.
    // And the allow rules are what gemini runs without asking (a shell prefix rule as a command prefix).
    expect(settings.tools).toEqual({
      core: ['read_file', 'run_shell_command', 'mcp_github_*', 'mcp_docs_*', 'mcp_brainstem_*'],
      exclude: ['web_fetch'],
      allowed: ['run_shell_command(npm test)'],
    });
    // Trusted, so that headless gemini offers its tools.
    expect(settings.mcpServers.brainstem).toEqual({
      httpUrl: 'http://127.0.0.1:4820/mcp',
      headers: { 'X-Brainstem-Session': '${BRAINSTEM_SESSION_ID}', Authorization: 'Bearer ${BRAINSTEM_TOKEN}' },
      trust: true,
    });
  });

  it('writes hook matchers in gemini-cli tool names, so a guard on Bash matches run_shell_command', () => {
    // Given hooks matching Claude tool names, an alternation, and names gemini-cli has as they are
    const hook = (matcher: string) => ({ type: 'command' as const, command: './h.sh', matcher, timeout: 1 });
    const doc = normalizeDocument({ name: 'M', hooks: { PreToolUse: [hook('Bash'), hook('Edit|MultiEdit|Write'), hook('run_shell_command'), hook('mcp__gh__.*')] } });
    // When emitted; Then each alternative is mapped, duplicates folded, others kept
    const settings = JSON.parse(emitProfile('gemini-cli', doc, CTX).files[0].content);
    expect(settings.hooks.BeforeTool.map((e: { matcher: string }) => e.matcher)).toEqual(['run_shell_command', 'replace|write_file', 'run_shell_command', 'mcp__gh__.*']);
  });

  it('cannot set bypassPermissions in settings: warns and leaves the mode unset', () => {
    const result = emitProfile('gemini-cli', normalizeDocument({ name: 'B', permissions: { mode: 'bypassPermissions', allow: [], deny: [], ask: [] } }), CTX);
    expect(JSON.parse(result.files[0].content).general).toBeUndefined();
    expect(result.warnings[0].message).toContain('YOLO');
  });
});

describe('opencode emitter', () => {
  it('warns that opencode has no declarative hooks, maps provider/model, and orders rules so deny wins', () => {
    const { content, warnings } = file('opencode', '.opencode/agent/rich.md');
    const fm = load(/^---\n([\s\S]*?)\n---\n/.exec(content)![1]) as Record<string, unknown>;
    expect(fm.model).toBe('anthropic/claude-opus-4-8');
    expect(fm.permission).toEqual({ edit: 'allow', bash: { '*': 'ask', 'npm test *': 'allow', 'git push *': 'ask', 'rm *': 'deny' }, webfetch: 'deny' });
    expect(warnings.filter((w) => w.code === 'hook_skipped').map((w) => w.message)).toEqual([
      expect.stringContaining('hooks.SessionStart'),
      expect.stringContaining('hooks.PreToolUse'),
    ]);
    const config = JSON.parse(file('opencode', 'opencode.json').content);
    expect(config.mcp.github).toEqual({ type: 'local', command: ['npx', '-y', 'gh-mcp'], environment: { GH_TOKEN: '{env:GH_TOKEN}' }, enabled: true });
    expect(config.mcp.brainstem.headers).toEqual({ 'X-Brainstem-Session': '{env:BRAINSTEM_SESSION_ID}', Authorization: 'Bearer {env:BRAINSTEM_TOKEN}' });
  });

  it("writes Claude Code's legacy prefix rules (`rm:*`) as opencode globs (`rm *`)", () => {
    // Given deny and allow rules in the `:*` form; When emitted; Then they are globs opencode matches
    const profile = normalizeDocument({ name: 'Legacy', permissions: { mode: 'default', allow: ['Bash(npm test:*)'], deny: ['Bash(rm:*)'], ask: [] } });
    const agent = emitProfile('opencode', profile, { ...CTX, profileId: 'legacy' }).files.find((f) => f.path === '.opencode/agent/legacy.md')!.content;
    const fm = load(/^---\n([\s\S]*?)\n---\n/.exec(agent)![1]) as { permission: { bash: Record<string, string> } };
    expect(fm.permission.bash).toEqual({ '*': 'ask', 'npm test *': 'allow', 'rm *': 'deny' });
  });

  it("maps rules on the profile's MCP servers to keys on their tools, allow then ask then deny, so deny wins", () => {
    // Given rules on the profile's servers (one tool, a whole server both ways) and on a server it does not have
    const profile = normalizeDocument({
      name: 'Mcp Rules',
      tools: { mcp_servers: { gh: { type: 'stdio', command: 'gh-mcp' }, docs: { type: 'http', url: 'https://docs.example/mcp' }, gh_admin: { type: 'stdio', command: 'gh-admin' } } },
      permissions: { mode: 'default', allow: ['mcp__gh', 'mcp__docs__search'], ask: ['mcp__docs__*', 'mcp__gh__create_issue'], deny: ['mcp__gh__delete_repo', 'mcp__gh__create_issue', 'mcp__slack__post'] },
    });
    // When emitted
    const { files, warnings } = emitProfile('opencode', profile, { ...CTX, profileId: 'mcp-rules' });
    const fm = load(/^---\n([\s\S]*?)\n---\n/.exec(files.find((f) => f.path === '.opencode/agent/mcp-rules.md')!.content)![1]) as { permission: Record<string, unknown> };
    // Then each is a key in opencode's `<server>_<tool>` names, in the order that lets deny, then ask, win
    const { edit: _e, bash: _b, webfetch: _w, ...mcp } = fm.permission;
    expect(Object.entries(mcp)).toEqual([
      ['gh_*', 'allow'],
      ['docs_search', 'allow'],
      ['docs_*', 'ask'],
      ['gh_delete_repo', 'deny'],
      ['gh_create_issue', 'deny'],
    ]);
    // And what opencode cannot express precisely is said
    const messages = warnings.map((w) => w.message);
    expect(messages).toContain('opencode: deny rule mcp__slack__post has no opencode equivalent');
    expect(messages).toContain('opencode: allow rule mcp__gh (gh_*) also reaches the tools of gh_admin');
  });
});

describe("the reserved brainstem server carries the worker's own credential", () => {
  const content = (runtime: Parameters<typeof emitProfile>[0], path: string) => emitProfile(runtime, RICH, CTX).files.find((f) => f.path === path)!.content;

  it('then every runtime sends Authorization from the worker environment (BRAINSTEM_TOKEN), in its own reference syntax, never a value', () => {
    expect(JSON.parse(content('claude-code', '.mcp.json')).mcpServers.brainstem.headers).toEqual({
      'X-Brainstem-Session': '${BRAINSTEM_SESSION_ID:-}',
      Authorization: 'Bearer ${BRAINSTEM_TOKEN:-}',
    });
    expect((parseToml(content('codex', '.codex/config.toml')) as { mcp_servers: Record<string, unknown> }).mcp_servers.brainstem).toEqual({
      url: 'http://127.0.0.1:4820/mcp',
      bearer_token_env_var: 'BRAINSTEM_TOKEN',
      env_http_headers: { 'X-Brainstem-Session': 'BRAINSTEM_SESSION_ID' },
      default_tools_approval_mode: 'approve',
    });
    expect(JSON.parse(content('gemini-cli', '.gemini/settings.json')).mcpServers.brainstem.headers.Authorization).toBe('Bearer ${BRAINSTEM_TOKEN}');
    expect(JSON.parse(content('opencode', 'opencode.json')).mcp.brainstem.headers.Authorization).toBe('Bearer {env:BRAINSTEM_TOKEN}');
  });
});
