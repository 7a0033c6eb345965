import { stringify } from 'smol-toml';
import { mcpRuleTarget } from '../mcp-rules';
import { HOOK_EVENTS, PermissionMode, ProfileDoc } from '../profile.schema';
import {
  RESERVED_MCP_SERVER,
  SESSION_ENV,
  SESSION_HEADER,
  TOKEN_ENV,
  Warnings,
  brainstemMcpUrl,
  denyRules,
  instructionsMarkdown,
  profileBlock,
  profileMcpServers,
  reasoningEffort,
  uniq,
  warnCommonGaps,
} from './emitter-support';
import { EmitContext, EmitResult } from './emitter.types';

const REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high', 'xhigh'];

type ApprovalPolicy = 'on-request' | 'never';
type SandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access';

/** Permission mode → codex approval policy and sandbox (the closest codex has to each mode). */
const MODE_MAP: Record<PermissionMode, { approval_policy: ApprovalPolicy; sandbox_mode: SandboxMode }> = {
  plan: { approval_policy: 'on-request', sandbox_mode: 'read-only' },
  default: { approval_policy: 'on-request', sandbox_mode: 'read-only' },
  acceptEdits: { approval_policy: 'on-request', sandbox_mode: 'workspace-write' },
  auto: { approval_policy: 'on-request', sandbox_mode: 'workspace-write' },
  dontAsk: { approval_policy: 'never', sandbox_mode: 'workspace-write' },
  bypassPermissions: { approval_policy: 'never', sandbox_mode: 'danger-full-access' },
};

/**
 * codex: instructions, reasoning effort and MCP (docs/architecture/decisions.md#runtime-mapping). `.codex/config.toml` and a marked block in `AGENTS.md`;
 * allow/deny/ask rules on the profile's MCP servers become their approval settings; the built-in tool
 * allowlist, other fine-grained rules and hooks are not mapped (warned).
 */
export function emitCodex(profile: ProfileDoc, ctx: EmitContext): EmitResult {
  const warnings = new Warnings();
  const config: Record<string, unknown> = {};
  if (profile.model.model) config.model = profile.model.model;
  if (profile.model.provider) warnings.add('model_not_mapped', 'a project .codex/config.toml ignores model_provider; set model.provider in ~/.codex/config.toml');
  const effort = reasoningEffort(profile);
  if (effort !== undefined) {
    if (REASONING_EFFORTS.includes(effort)) config.model_reasoning_effort = effort;
    else warnings.add('not_mapped', `codex model_reasoning_effort accepts ${REASONING_EFFORTS.join('|')}; ${effort} is not written`);
  }
  Object.assign(config, MODE_MAP[profile.permissions.mode]);
  if (profile.permissions.mode === 'plan') warnings.add('not_mapped', 'codex has no plan mode; plan is mapped to a read-only sandbox with approval on request');
  const servers = codexMcpServers(profile, ctx, warnings);
  const unmapped = applyMcpRules(profile, servers);
  config.mcp_servers = servers;

  if (profile.tools.builtin) warnings.add('not_mapped', 'codex does not map the built-in tool allowlist (tools.builtin)');
  for (const list of ['allow', 'deny', 'ask'] as const) {
    if (unmapped[list].length) warnings.add('not_mapped', `codex does not map fine-grained ${list} rules: ${unmapped[list].join(', ')}`);
  }
  for (const event of HOOK_EVENTS) {
    if (profile.hooks[event]?.length) warnings.add('hook_skipped', `codex: hooks.${event} is not mapped (configure codex hooks by hand)`);
  }
  warnCommonGaps('codex', profile, warnings);

  const instructions = instructionsMarkdown(profile);
  return {
    files: [
      { path: '.codex/config.toml', content: `${stringify(config)}\n`, merge: 'toml' },
      { path: 'AGENTS.md', content: profileBlock(ctx.profileId, `# ${profile.name}\n\n${instructions}`.trimEnd()), merge: 'block' },
    ],
    warnings: warnings.list,
  };
}

/**
 * codex takes `env` values literally: `GH_TOKEN = "${GH_TOKEN}"` would hand the server those characters. A variable
 * passed on under its own name goes to `env_vars` (codex forwards it from its environment); any other reference
 * cannot be expressed and is left out, warned.
 */
function codexEnv(name: string, env: Record<string, string>, warnings: Warnings): { env?: Record<string, string>; env_vars?: string[] } {
  const literal: Record<string, string> = {};
  const forwarded: string[] = [];
  for (const [key, value] of Object.entries(env)) {
    if (value === `\${${key}}`) forwarded.push(key);
    else if (/\$\{[^}]*\}/.test(value)) warnings.add('not_mapped', `codex: MCP server ${name}: env ${key} refers to another variable (${value}); codex forwards variables only under their own name, so it is left out`);
    else literal[key] = value;
  }
  return { ...(Object.keys(literal).length ? { env: literal } : {}), ...(forwarded.length ? { env_vars: forwarded } : {}) };
}

function codexMcpServers(profile: ProfileDoc, ctx: EmitContext, warnings: Warnings): Record<string, Record<string, unknown>> {
  const servers: Record<string, Record<string, unknown>> = {};
  for (const [name, s] of profileMcpServers(profile)) {
    servers[name] = s.type === 'stdio' ? { command: s.command ?? '', args: s.args ?? [], ...codexEnv(name, s.env ?? {}, warnings) } : { url: s.url ?? '' };
  }
  // codex reads header values from environment variables by name. Its tools act only on the caller's own
  // session, and without "approve" a headless codex refuses every call to them (see applyMcpRules).
  servers[RESERVED_MCP_SERVER] = {
    url: brainstemMcpUrl(ctx),
    bearer_token_env_var: TOKEN_ENV,
    env_http_headers: { [SESSION_HEADER]: SESSION_ENV },
    default_tools_approval_mode: 'approve',
  };
  return servers;
}

type RuleList = 'allow' | 'ask' | 'deny';

/**
 * Rules on the profile's own MCP servers, as codex's approval settings. codex 0.169 asks before calling an MCP
 * tool by default (one that declares no annotations, at least), and a headless `codex exec` (how sessions run
 * it) refuses every call it would ask about ("MCP tool call requires approval, but approval policy is never"),
 * so without this a session could use no such tool. allow → approval_mode "approve", ask → "prompt" (the
 * tool's, or for a whole server its default_tools_approval_mode), deny → disabled_tools (a whole server:
 * enabled = false). Applied allow, ask, deny, so deny wins, then ask, as in Claude Code; bypassPermissions
 * approves every server's tools. Returns the rules that name no server of the profile.
 */
function applyMcpRules(profile: ProfileDoc, servers: Record<string, Record<string, unknown>>): Record<RuleList, string[]> {
  const names = profileMcpServers(profile).map(([name]) => name);
  if (profile.permissions.mode === 'bypassPermissions') for (const name of names) servers[name].default_tools_approval_mode = 'approve';
  const lists: Record<RuleList, string[]> = { allow: profile.permissions.allow, ask: profile.permissions.ask, deny: denyRules(profile) };
  const unmapped: Record<RuleList, string[]> = { allow: [], ask: [], deny: [] };
  for (const list of ['allow', 'ask', 'deny'] as const) {
    for (const rule of lists[list]) {
      const target = mcpRuleTarget(rule, names);
      if (!target) {
        unmapped[list].push(rule);
        continue;
      }
      const server = servers[target.server];
      if (list === 'deny') {
        if (target.tool === null) server.enabled = false;
        else server.disabled_tools = uniq([...((server.disabled_tools as string[] | undefined) ?? []), target.tool]);
        continue;
      }
      const approval = list === 'allow' ? 'approve' : 'prompt';
      if (target.tool === null) server.default_tools_approval_mode = approval;
      else server.tools = { ...(server.tools as Record<string, unknown> | undefined), [target.tool]: { approval_mode: approval } };
    }
  }
  return unmapped;
}
