import { mcpRuleName } from '../mcp-rules';
import { McpServer, PermissionMode } from '../profile.schema';
import { Plain, ScanWarnings, idFrom, isPlain, nameFromId, readMcpServers, readProfileBlock, readToml, stringList, validatedProposal, warnUnknownKeys } from './scan-support';
import { ScanFiles, ScanOptions, ScanResult } from './scan.types';

const CONFIG = '.codex/config.toml';
const AGENTS = 'AGENTS.md';
const CONFIG_KEYS = ['model', 'model_reasoning_effort', 'approval_policy', 'sandbox_mode', 'mcp_servers'];

/**
 * codex's approval policy and sandbox → the permission mode the codex emitter maps to them. The emitter is not
 * one-to-one (plan and default both give read-only; auto and acceptEdits both give workspace-write), so the
 * mode chosen is the one that re-emits the same pair without an extra warning.
 */
function modeOf(approval: unknown, sandbox: unknown, warnings: ScanWarnings): PermissionMode | undefined {
  if (approval === undefined && sandbox === undefined) return undefined;
  const never = approval === 'never';
  if (approval !== undefined && approval !== 'never' && approval !== 'on-request') {
    warnings.add('lossy', CONFIG, `approval_policy ${String(approval)} has no permission mode; read as on-request`);
  }
  switch (sandbox) {
    case 'read-only':
      if (never) warnings.add('lossy', CONFIG, 'approval_policy never with a read-only sandbox has no permission mode; read as default');
      return 'default';
    case 'danger-full-access':
      if (!never) warnings.add('lossy', CONFIG, 'a full-access sandbox with approvals has no permission mode; read as acceptEdits');
      return never ? 'bypassPermissions' : 'acceptEdits';
    case 'workspace-write':
    case undefined:
      return never ? 'dontAsk' : 'acceptEdits';
    default:
      warnings.add('not_mapped', CONFIG, `sandbox_mode ${String(sandbox)} is not known; the default mode is proposed`);
      return undefined;
  }
}

/**
 * The inverse of the codex emitter: `.codex/config.toml` and the profile's marked block in AGENTS.md (a plain
 * AGENTS.md becomes the system prompt). codex has no place for the built-in tool list, hooks, fallback models,
 * skills or rules other than on MCP servers, so a scanned codex profile has none of them. Pure.
 */
export function scanCodex(files: ScanFiles, opts: ScanOptions): ScanResult {
  const warnings = new ScanWarnings();
  const used: string[] = [];
  const config: Plain = readToml(files, CONFIG, warnings) ?? {};
  if (files.has(CONFIG)) used.push(CONFIG);
  warnUnknownKeys(config, CONFIG_KEYS, CONFIG, warnings);

  const agentsText = files.get(AGENTS);
  const block = agentsText === undefined ? undefined : readProfileBlock(agentsText, AGENTS, warnings);
  if (agentsText !== undefined) used.push(AGENTS);
  let id: string;
  let name: string;
  let instructions = block?.instructions ?? {};
  if (block) {
    id = block.id;
    name = block.name ?? nameFromId(id);
    if (agentsText !== undefined && agentsText.replace(/<!-- brainstem:profile [\s\S]*? end -->\n?/g, '').trim()) {
      warnings.add('lossy', AGENTS, 'text outside the profile block is the project\'s own and is not part of the profile');
    }
  } else {
    id = idFrom(opts.projectDir?.split('/').filter(Boolean).pop());
    name = nameFromId(id);
    if (agentsText?.trim()) {
      instructions = { system_prompt: agentsText.trim() };
      warnings.add('lossy', AGENTS, 'no brainstem profile block: the whole file is proposed as the system prompt; applying writes it as a marked block');
    }
  }

  const effort = config.model_reasoning_effort;
  const mode = modeOf(config.approval_policy, config.sandbox_mode, warnings);
  const mcpServers = withForwardedEnv(readMcpServers(config.mcp_servers, CONFIG, warnings, ['url']), config.mcp_servers);
  const rules = mcpRules(config.mcp_servers, Object.keys(mcpServers ?? {}), mode, warnings);
  const raw: Plain = {
    name,
    runtime: 'codex',
    model: { ...(typeof config.model === 'string' ? { model: config.model } : {}), ...(typeof effort === 'string' ? { options: { reasoning_effort: effort } } : {}) },
    instructions,
    tools: mcpServers ? { mcp_servers: mcpServers } : {},
    permissions: { ...(mode ? { mode } : {}), ...rules },
  };
  return { runtime: 'codex', profileId: id, profile: validatedProposal(raw), filesUsed: used, warnings: warnings.list };
}

/**
 * The approval settings the codex emitter writes for a profile's MCP rules, read back as those rules: an approved
 * server or tool is allowed, one to prompt for is asked about, a disabled one denied. bypassPermissions approves
 * every server itself, so there a server's "approve" is the mode's, not a rule.
 */
function mcpRules(raw: unknown, servers: readonly string[], mode: PermissionMode | undefined, warnings: ScanWarnings): Partial<Record<'allow' | 'ask' | 'deny', string[]>> {
  const out: Record<'allow' | 'ask' | 'deny', string[]> = { allow: [], ask: [], deny: [] };
  const approval = (value: unknown, rule: string, at: string, implied = false) => {
    if (value === 'approve') {
      if (!implied) out.allow.push(rule);
    } else if (value === 'prompt') out.ask.push(rule);
    else if (value !== undefined && value !== 'auto') warnings.add('not_mapped', CONFIG, `${at} ${String(value)} is not known; not kept`);
  };
  for (const name of servers) {
    const server = isPlain(raw) ? raw[name] : undefined;
    if (!isPlain(server)) continue;
    const at = `mcp_servers.${name}`;
    approval(server.default_tools_approval_mode, mcpRuleName({ server: name, tool: null }), `${at}.default_tools_approval_mode`, mode === 'bypassPermissions');
    if (isPlain(server.tools)) {
      for (const [tool, settings] of Object.entries(server.tools)) {
        if (isPlain(settings)) approval(settings.approval_mode, mcpRuleName({ server: name, tool }), `${at}.tools.${tool}.approval_mode`);
      }
    }
    if (server.enabled === false) out.deny.push(mcpRuleName({ server: name, tool: null }));
    for (const tool of stringList(server.disabled_tools) ?? []) out.deny.push(mcpRuleName({ server: name, tool }));
  }
  return Object.fromEntries(Object.entries(out).filter(([, rules]) => rules.length > 0));
}

/** `env_vars = ["K"]` (codex forwards K) is how the emitter writes a profile's `K: ${K}`: read it back as that. */
function withForwardedEnv(servers: Record<string, McpServer> | undefined, raw: unknown): Record<string, McpServer> | undefined {
  if (!servers || !isPlain(raw)) return servers;
  for (const [name, server] of Object.entries(servers)) {
    const entry = raw[name];
    const forwarded = isPlain(entry) ? stringList(entry.env_vars) : undefined;
    if (server.type === 'stdio' && forwarded?.length) server.env = { ...server.env, ...Object.fromEntries(forwarded.map((k) => [k, `\${${k}}`])) };
  }
  return servers;
}
