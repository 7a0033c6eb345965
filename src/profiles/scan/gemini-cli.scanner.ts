import { GEMINI_MCP_NAMING, mcpRuleName, mcpRuleTarget } from '../mcp-rules';
import { Hook, HookEvent, PermissionMode } from '../profile.schema';
import { Plain, ScanWarnings, idFrom, isPlain, nameFromId, readJson, readMcpServers, readProfileBlock, stringList, validatedProposal, warnUnknownKeys } from './scan-support';
import { ScanFiles, ScanOptions, ScanResult } from './scan.types';

const SETTINGS = '.gemini/settings.json';
const GEMINI = 'GEMINI.md';
const SETTINGS_KEYS = ['model', 'general', 'tools', 'mcpServers', 'mcp', 'hooks'];
const MS_PER_S = 1000;

/** gemini-cli tool names → the Claude names the emitter maps from (for `replace`, Edit: MultiEdit folds into it too). */
const TOOL_NAMES: Record<string, string> = {
  read_file: 'Read',
  write_file: 'Write',
  replace: 'Edit',
  run_shell_command: 'Bash',
  glob: 'Glob',
  grep_search: 'Grep',
  // Its name until gemini-cli renamed it in January 2026 (PR #18003); older settings still use it.
  search_file_content: 'Grep',
  list_directory: 'LS',
  google_web_search: 'WebSearch',
  web_fetch: 'WebFetch',
  write_todos: 'TodoWrite',
};
const MODES: Record<string, PermissionMode> = { default: 'default', auto_edit: 'acceptEdits', plan: 'plan' };
const EVENTS: Record<string, HookEvent> = { SessionStart: 'SessionStart', BeforeTool: 'PreToolUse', AfterTool: 'PostToolUse' };

/**
 * The inverse of the gemini-cli emitter: `.gemini/settings.json` and the profile block in GEMINI.md. gemini-cli
 * files hold no description, ask rules or argument rules other than shell prefixes (`Bash(git log *)`), so those
 * cannot come back; allowed tools come back as permissions.allow, excluded tools and MCP servers and tools as
 * permissions.deny (the emitter folds tools.deny into the same list). Pure.
 */
export function scanGeminiCli(files: ScanFiles, opts: ScanOptions): ScanResult {
  const warnings = new ScanWarnings();
  const used: string[] = [];
  const settings = readJson(files, SETTINGS, warnings) ?? {};
  if (files.has(SETTINGS)) used.push(SETTINGS);
  warnUnknownKeys(settings, SETTINGS_KEYS, SETTINGS, warnings);

  const text = files.get(GEMINI);
  if (text !== undefined) used.push(GEMINI);
  const block = text === undefined ? undefined : readProfileBlock(text, GEMINI, warnings);
  const id = block?.id ?? idFrom(opts.projectDir?.split('/').filter(Boolean).pop());
  let instructions = block?.instructions ?? {};
  if (!block && text?.trim()) {
    instructions = { system_prompt: text.trim() };
    warnings.add('lossy', GEMINI, 'no brainstem profile block: the whole file is proposed as the system prompt; applying writes it as a marked block');
  }

  const model = isPlain(settings.model) && typeof settings.model.name === 'string' ? settings.model.name : undefined;
  const approval = isPlain(settings.general) ? settings.general.defaultApprovalMode : undefined;
  const mode = approval === undefined ? undefined : MODES[String(approval)];
  // Without an approval mode gemini-cli asks (its default); applying then writes defaultApprovalMode default.
  if (approval === undefined) warnings.add('lossy', SETTINGS, 'no general.defaultApprovalMode: mode default is proposed, and applying writes it');
  else if (!mode) warnings.add('not_mapped', SETTINGS, `defaultApprovalMode ${String(approval)} has no permission mode; default is proposed`);

  const tools = isPlain(settings.tools) ? settings.tools : {};
  warnUnknownKeys(tools, ['core', 'exclude', 'allowed'], SETTINGS, warnings, 'tools.');
  const builtin = tools.core === undefined ? undefined : claudeNames(tools.core, 'tools.core', warnings);
  const mcpServers = readMcpServers(settings.mcpServers, SETTINGS, warnings, ['httpUrl', 'url']);
  const serverNames = Object.keys(mcpServers ?? {});
  const deny = [
    ...(tools.exclude === undefined ? [] : claudeNames(tools.exclude, 'tools.exclude', warnings)),
    ...excludedMcpRules(settings, serverNames, warnings),
  ];
  const allow = tools.allowed === undefined ? [] : allowRules(tools.allowed, serverNames, warnings);

  const raw: Plain = {
    name: block?.name ?? nameFromId(id),
    runtime: 'gemini-cli',
    model: model ? { model } : {},
    instructions,
    tools: { ...(builtin ? { builtin } : {}), ...(mcpServers ? { mcp_servers: mcpServers } : {}) },
    permissions: { mode: mode ?? 'default', allow, deny },
    hooks: readHooks(settings.hooks, warnings),
  };
  return { runtime: 'gemini-cli', profileId: id, profile: validatedProposal(raw), filesUsed: used, warnings: warnings.list };
}

/**
 * `run_shell_command(<prefix>)` is the rule `Bash(<prefix> *)`, which the emitter writes as it; `mcp_<server>_<tool>`
 * (`_*`: the whole server) on a declared server is `mcp__<server>__<tool>` (`mcp__<server>`); names map as in core.
 */
function allowRules(value: unknown, serverNames: readonly string[], warnings: ScanWarnings): string[] {
  const entries = stringList(value);
  if (!entries) {
    warnings.add('malformed', SETTINGS, 'tools.allowed is not a list; ignored');
    return [];
  }
  const rule = (entry: string): string | undefined => {
    const prefix = /^run_shell_command\(([^*?()]+)\)$/.exec(entry)?.[1];
    if (prefix !== undefined) return `Bash(${prefix} *)`;
    const mcp = mcpRuleTarget(entry, serverNames, GEMINI_MCP_NAMING);
    return mcp ? mcpRuleName(mcp) : TOOL_NAMES[entry];
  };
  const unknown = entries.filter((e) => rule(e) === undefined);
  if (unknown.length) warnings.add('not_mapped', SETTINGS, `tools.allowed: ${unknown.join(', ')} has no profile rule; not kept`);
  return entries.flatMap((e) => rule(e) ?? []);
}

/** A declared server's `excludeTools` are its tools denied, and one in `mcp.excluded` the whole server. */
function excludedMcpRules(settings: Plain, serverNames: readonly string[], warnings: ScanWarnings): string[] {
  const rules: string[] = [];
  const servers = isPlain(settings.mcpServers) ? settings.mcpServers : {};
  for (const name of serverNames) {
    const server = servers[name];
    for (const tool of (isPlain(server) ? stringList(server.excludeTools) : undefined) ?? []) rules.push(mcpRuleName({ server: name, tool }));
  }
  if (settings.mcp === undefined) return rules;
  if (!isPlain(settings.mcp)) {
    warnings.add('malformed', SETTINGS, 'mcp is not a mapping; ignored');
    return rules;
  }
  warnUnknownKeys(settings.mcp, ['excluded'], SETTINGS, warnings, 'mcp.');
  for (const name of stringList(settings.mcp.excluded) ?? []) {
    if (serverNames.includes(name)) rules.push(mcpRuleName({ server: name, tool: null }));
    else warnings.add('not_mapped', SETTINGS, `mcp.excluded: ${name} is not a declared server; not kept`);
  }
  return rules;
}

/** `mcp_<server>_*`: a whole MCP server let through an allowlist, which a profile says by declaring the server. */
const MCP_SERVER_PATTERN = /^mcp_.+_\*$/;

function claudeNames(value: unknown, key: string, warnings: ScanWarnings): string[] {
  const names = stringList(value)?.filter((n) => !MCP_SERVER_PATTERN.test(n));
  if (!names) {
    warnings.add('malformed', SETTINGS, `${key} is not a list of names; ignored`);
    return [];
  }
  const unknown = names.filter((n) => !TOOL_NAMES[n]);
  if (unknown.length) warnings.add('not_mapped', SETTINGS, `${key}: ${unknown.join(', ')} has no profile tool name; not kept`);
  return names.flatMap((n) => (TOOL_NAMES[n] ? [TOOL_NAMES[n]] : []));
}

/** Command handlers; gemini-cli timeouts are milliseconds, a profile's seconds (rounded up). */
function readHooks(value: unknown, warnings: ScanWarnings): Partial<Record<HookEvent, Hook[]>> {
  if (value === undefined) return {};
  if (!isPlain(value)) {
    warnings.add('malformed', SETTINGS, 'hooks is not a mapping; ignored');
    return {};
  }
  warnUnknownKeys(value, Object.keys(EVENTS), SETTINGS, warnings, 'hooks.');
  const out: Partial<Record<HookEvent, Hook[]>> = {};
  for (const [name, event] of Object.entries(EVENTS)) {
    const hooks: Hook[] = [];
    for (const entry of Array.isArray(value[name]) ? value[name] : []) {
      if (!isPlain(entry) || !Array.isArray(entry.hooks)) continue;
      for (const h of entry.hooks) {
        if (!isPlain(h) || h.type !== 'command' || typeof h.command !== 'string') {
          warnings.add('not_mapped', SETTINGS, `hooks.${name}: only command handlers are kept`);
          continue;
        }
        const ms = typeof h.timeout === 'number' && h.timeout > 0 ? h.timeout : undefined;
        if (ms !== undefined && ms % MS_PER_S) warnings.add('lossy', SETTINGS, `hooks.${name}: timeout ${ms} ms rounded up to whole seconds`);
        const timeout = ms === undefined ? undefined : Math.ceil(ms / MS_PER_S);
        const matcher = typeof entry.matcher === 'string' && entry.matcher ? entry.matcher.split('|').map((alt) => TOOL_NAMES[alt] ?? alt).join('|') : undefined;
        hooks.push({ type: 'command', command: h.command, ...(matcher ? { matcher } : {}), ...(timeout ? { timeout } : {}) } as Hook);
      }
    }
    if (hooks.length) out[event] = hooks;
  }
  return out;
}
