import { GEMINI_MCP_NAMING, mcpRuleName, mcpRuleTarget } from '../mcp-rules';
import { HOOK_EVENTS, HookEvent, PermissionMode, ProfileDoc } from '../profile.schema';
import {
  RESERVED_MCP_SERVER,
  Warnings,
  brainstemHeaders,
  brainstemMcpUrl,
  denyRules,
  instructionsMarkdown,
  json,
  profileBlock,
  profileMcpServers,
  uniq,
  warnCommonGaps,
} from './emitter-support';
import { EmitContext, EmitResult } from './emitter.types';

/**
 * Claude tool names → gemini-cli built-in tool names (as of 0.61: `search_file_content` became `grep_search`, and
 * `tools.core` does not resolve the old name, which would leave the agent without search).
 */
const TOOL_NAMES: Record<string, string> = {
  Read: 'read_file',
  Write: 'write_file',
  Edit: 'replace',
  MultiEdit: 'replace',
  Bash: 'run_shell_command',
  Glob: 'glob',
  Grep: 'grep_search',
  LS: 'list_directory',
  WebSearch: 'google_web_search',
  WebFetch: 'web_fetch',
  TodoWrite: 'write_todos',
};

const APPROVAL_MODES: Partial<Record<PermissionMode, string>> = { default: 'default', acceptEdits: 'auto_edit', plan: 'plan' };
const EVENTS: Record<HookEvent, string> = { SessionStart: 'SessionStart', PreToolUse: 'BeforeTool', PostToolUse: 'AfterTool' };
const MS_PER_S = 1000;

/** gemini-cli, generic mapping: `.gemini/settings.json` and a marked block in `GEMINI.md`; gaps are warned. */
export function emitGeminiCli(profile: ProfileDoc, ctx: EmitContext): EmitResult {
  const warnings = new Warnings();
  const settings: Record<string, unknown> = {};
  if (profile.model.model) settings.model = { name: profile.model.model };
  if (profile.model.provider) warnings.add('model_not_mapped', 'gemini-cli has no provider setting; model.provider is ignored');
  const mode = APPROVAL_MODES[profile.permissions.mode];
  if (mode) settings.general = { defaultApprovalMode: mode };
  else warnings.add('not_mapped', `gemini-cli settings cannot set ${profile.permissions.mode} (YOLO only from the command line); the approval mode is left unset`);

  const serverNames = profileMcpServers(profile).map(([name]) => name);
  const servers = geminiMcpServers(profile, ctx, warnings);
  const deny = excludeMcpTools(denyRules(profile), serverNames, servers);
  const tools: Record<string, unknown> = {};
  if (profile.tools.builtin) tools.core = [...mapTools(profile.tools.builtin, 'tools.builtin', warnings), ...mcpToolPatterns(profile)];
  const exclude = mapTools(deny.others, 'deny', warnings);
  if (exclude.length) tools.exclude = exclude;
  const allowed = allowedTools(profile.permissions.allow, serverNames, warnings);
  if (allowed.length) tools.allowed = allowed;
  if (Object.keys(tools).length) settings.tools = tools;
  if (profile.permissions.ask.length) warnings.add('not_mapped', `gemini-cli: ask rules are not mapped: ${profile.permissions.ask.join(', ')}`);

  settings.mcpServers = servers;
  if (deny.excludedServers.length) settings.mcp = { excluded: deny.excludedServers };
  const hooks = geminiHooks(profile, warnings);
  if (Object.keys(hooks).length) settings.hooks = hooks;
  warnCommonGaps('gemini-cli', profile, warnings);

  return {
    files: [
      { path: '.gemini/settings.json', content: json(settings), merge: 'json' },
      { path: 'GEMINI.md', content: profileBlock(ctx.profileId, `# ${profile.name}\n\n${instructionsMarkdown(profile)}`.trimEnd()), merge: 'block' },
    ],
    warnings: warnings.list,
  };
}

/** `Bash(git log *)` or `Bash(git log:*)`: a command prefix, with no other wildcard. */
const SHELL_PREFIX_RULE = /^Bash\(([^*?()]+?)(?: \*|:\*)\)$/;

/**
 * Allow rules as `tools.allowed`, the tools gemini runs without asking: the only ones a headless gemini (how
 * sessions run it) offers beside the read-only ones, MCP tools included (an untrusted server's tools are not
 * offered at all otherwise: checked with gemini 0.61). A shell prefix rule becomes `run_shell_command(<prefix>)`,
 * which gemini 0.61 matches as a command prefix, and a rule on one of the profile's MCP servers
 * `mcp_<server>_<tool>` (a whole server `mcp_<server>_*`); other rules (an exact command, a path) are warned.
 */
function allowedTools(rules: readonly string[], serverNames: readonly string[], warnings: Warnings): string[] {
  const out: string[] = [];
  const unmapped: string[] = [];
  for (const rule of rules) {
    const prefix = SHELL_PREFIX_RULE.exec(rule)?.[1];
    const mcp = mcpRuleTarget(rule, serverNames);
    const mapped = prefix !== undefined ? `run_shell_command(${prefix})` : mcp ? mcpRuleName(mcp, GEMINI_MCP_NAMING) : TOOL_NAMES[rule];
    if (mapped) {
      if (!out.includes(mapped)) out.push(mapped);
    } else unmapped.push(rule);
  }
  if (unmapped.length) warnings.add('not_mapped', `gemini-cli: allow rules are not mapped: ${unmapped.join(', ')}`);
  return out;
}

/** Plain tool names map; rules with arguments (`Bash(git push *)`) and unknown tools are warned. */
function mapTools(names: readonly string[], from: string, warnings: Warnings): string[] {
  const out: string[] = [];
  for (const name of names) {
    const mapped = TOOL_NAMES[name];
    if (mapped) {
      if (!out.includes(mapped)) out.push(mapped);
    } else warnings.add('not_mapped', `gemini-cli: ${from} entry ${name} has no gemini-cli equivalent`);
  }
  return out;
}

/**
 * `tools.core` is an allowlist of every tool, MCP ones too (gemini 0.61 names them `mcp_<server>_<tool>`): the
 * profile's servers and the reserved one are let through whole, or an allowlist of built-ins would drop them.
 */
function mcpToolPatterns(profile: ProfileDoc): string[] {
  return [...[...profileMcpServers(profile)].map(([name]) => name), RESERVED_MCP_SERVER].map((server) => mcpRuleName({ server, tool: null }, GEMINI_MCP_NAMING));
}

function geminiMcpServers(profile: ProfileDoc, ctx: EmitContext, warnings: Warnings): Record<string, Record<string, unknown>> {
  const servers: Record<string, Record<string, unknown>> = {};
  for (const [name, s] of profileMcpServers(profile)) {
    if (name.includes('_')) warnings.add('not_mapped', `gemini-cli mis-parses "_" in MCP server names: ${name}`);
    servers[name] =
      s.type === 'stdio'
        ? { command: s.command ?? '', args: s.args ?? [], ...(s.env && Object.keys(s.env).length ? { env: s.env } : {}) }
        : { httpUrl: s.url ?? '' };
  }
  // Trusted: headless gemini (how sessions run it) offers no tool that would ask for confirmation, and the reserved
  // server's tools act only on the caller's own session.
  servers[RESERVED_MCP_SERVER] = { httpUrl: brainstemMcpUrl(ctx), headers: brainstemHeaders((v) => `\${${v}}`), trust: true };
  return servers;
}

/**
 * Deny rules on the profile's MCP servers: a tool goes in its server's `excludeTools`; a whole server is
 * returned, for `mcp.excluded` (gemini 0.61 then offers none of its tools, as it offers no excluded tool: checked).
 * The other deny rules are returned for `tools.exclude`.
 */
function excludeMcpTools(
  rules: readonly string[],
  serverNames: readonly string[],
  servers: Record<string, Record<string, unknown>>,
): { excludedServers: string[]; others: string[] } {
  const excluded: string[] = [];
  const others: string[] = [];
  for (const rule of rules) {
    const target = mcpRuleTarget(rule, serverNames);
    if (!target) others.push(rule);
    else if (target.tool === null) excluded.push(target.server);
    else servers[target.server].excludeTools = uniq([...((servers[target.server].excludeTools as string[] | undefined) ?? []), target.tool]);
  }
  return { excludedServers: uniq(excluded), others };
}

/**
 * A matcher is a regular expression over tool names: each `|` alternative that is a Claude tool name becomes its
 * gemini-cli name, or a `Bash` guard would never match `run_shell_command` and silently not run. Others pass as written.
 */
function geminiMatcher(matcher: string): string {
  return uniq(matcher.split('|').map((alt) => TOOL_NAMES[alt] ?? alt)).join('|');
}

/** Command handlers only; timeouts in milliseconds; matchers in gemini-cli tool names. */
function geminiHooks(profile: ProfileDoc, warnings: Warnings): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const event of HOOK_EVENTS) {
    const entries: unknown[] = [];
    (profile.hooks[event] ?? []).forEach((hook, i) => {
      if (hook.type !== 'command') {
        warnings.add('hook_skipped', `hooks.${event}[${i}]: gemini-cli runs only command handlers; this ${hook.type} handler is skipped`);
        return;
      }
      const handler = { type: 'command', command: hook.command ?? '', timeout: hook.timeout * MS_PER_S };
      entries.push(hook.matcher ? { matcher: geminiMatcher(hook.matcher), hooks: [handler] } : { hooks: [handler] });
    });
    if (entries.length) out[EVENTS[event]] = entries;
  }
  return out;
}
