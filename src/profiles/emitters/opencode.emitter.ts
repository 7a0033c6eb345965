import { OPENCODE_MCP_NAMING, mcpRuleName, mcpRuleTarget } from '../mcp-rules';
import { HOOK_EVENTS, PermissionMode, ProfileDoc } from '../profile.schema';
import {
  RESERVED_MCP_SERVER,
  Warnings,
  brainstemHeaders,
  brainstemMcpUrl,
  denyRules,
  instructionsMarkdown,
  json,
  markdown,
  profileMcpServers,
  warnCommonGaps,
} from './emitter-support';
import { EmitContext, EmitResult } from './emitter.types';

type Action = 'allow' | 'ask' | 'deny';
/** The tools opencode asks about, and `<server>_<tool>` globs over the profile's MCP tools. */
type Permission = { edit: Action; bash: Record<string, Action>; webfetch: Action; [mcpTool: string]: Action | Record<string, Action> };

const BASE: Record<PermissionMode, { edit: Action; bash: Action; webfetch: Action } | null> = {
  default: { edit: 'ask', bash: 'ask', webfetch: 'ask' },
  plan: { edit: 'deny', bash: 'ask', webfetch: 'allow' },
  acceptEdits: { edit: 'allow', bash: 'ask', webfetch: 'allow' },
  auto: { edit: 'allow', bash: 'ask', webfetch: 'allow' },
  dontAsk: null,
  bypassPermissions: { edit: 'allow', bash: 'allow', webfetch: 'allow' },
};
const EDIT_TOOLS = ['Write', 'Edit', 'MultiEdit', 'NotebookEdit'];

/**
 * opencode, generic mapping: `opencode.json` (MCP servers with the reserved `brainstem`, the profile as
 * default agent) and `.opencode/agent/<id>.md` (description, model, permission, prompt). No declarative hooks.
 */
export function emitOpencode(profile: ProfileDoc, ctx: EmitContext): EmitResult {
  const warnings = new Warnings();
  const config = { $schema: 'https://opencode.ai/config.json', default_agent: ctx.profileId, mcp: opencodeMcp(profile, ctx) };
  const agent = markdown(opencodeAgent(profile, warnings), instructionsMarkdown(profile));
  if (profile.tools.builtin) warnings.add('not_mapped', 'opencode does not map the built-in tool allowlist (tools.builtin); permissions apply');
  for (const event of HOOK_EVENTS) {
    if (profile.hooks[event]?.length) warnings.add('hook_skipped', `opencode has no declarative hooks (plugins only): hooks.${event} is not applied`);
  }
  warnCommonGaps('opencode', profile, warnings);
  return {
    files: [
      { path: 'opencode.json', content: json(config), merge: 'json' },
      { path: `.opencode/agent/${ctx.profileId}.md`, content: agent, merge: 'owned' },
    ],
    warnings: warnings.list,
  };
}

/** The profile as an opencode agent, without its prompt (the instructions): an agent file's frontmatter. */
export function opencodeAgent(profile: ProfileDoc, warnings = new Warnings()): Record<string, unknown> {
  return {
    description: (profile.description || profile.name).replace(/\s+/g, ' ').trim(),
    mode: 'primary',
    model: opencodeModel(profile, warnings),
    permission: opencodePermission(profile, warnings),
  };
}

/** `provider/model`; a bare model without a provider cannot be addressed. */
function opencodeModel(profile: ProfileDoc, warnings: Warnings): string | undefined {
  const { model, provider } = profile.model;
  if (!model) return undefined;
  if (model.includes('/')) return model;
  if (provider) return `${provider}/${model}`;
  warnings.add('model_not_mapped', `opencode needs provider/model; set model.provider to use ${model}`);
  return undefined;
}

/**
 * The mode sets the base actions; rules refine them. opencode applies the last matching rule, so bash patterns
 * and MCP tool keys are ordered allow, ask, deny: deny still wins, as in claude-code. A rule on one of the profile's
 * MCP servers becomes a key on its tools (opencode 1.18 offers no denied tool, and a headless run rejects one it
 * would ask about: checked); its MCP tools are allowed otherwise.
 */
function opencodePermission(profile: ProfileDoc, warnings: Warnings): Permission {
  const base = BASE[profile.permissions.mode] ?? BASE.default!;
  if (!BASE[profile.permissions.mode]) warnings.add('not_mapped', `opencode has no ${profile.permissions.mode} mode; mapped to ask`);
  const permission: Permission = { edit: base.edit, bash: { '*': base.bash }, webfetch: base.webfetch };
  const servers = Object.keys(profile.tools.mcp_servers ?? {});
  const apply = (rules: readonly string[], action: Action) => {
    for (const rule of rules) {
      const bash = /^Bash\((.+)\)$/.exec(rule);
      const mcp = mcpRuleTarget(rule, servers);
      if (mcp) {
        const key = mcpRuleName(mcp, OPENCODE_MCP_NAMING);
        delete permission[key];
        permission[key] = action;
        // `<server>_*` is a glob over tool names, so it reaches a server named `<server>_…` as well.
        const reached = mcp.tool === null ? [...servers, RESERVED_MCP_SERVER].filter((s) => s.startsWith(`${mcp.server}_`)) : [];
        if (reached.length) warnings.add('not_mapped', `opencode: ${action} rule ${rule} (${key}) also reaches the tools of ${reached.join(', ')}`);
      } else if (bash) {
        // Claude Code's legacy prefix form `git push:*` is its `git push *`; to opencode, `:*` is literal.
        const pattern = bash[1].endsWith(':*') ? `${bash[1].slice(0, -2)} *` : bash[1];
        delete permission.bash[pattern];
        permission.bash[pattern] = action;
      } else if (rule === 'Bash') permission.bash = { '*': action };
      else if (EDIT_TOOLS.includes(rule)) permission.edit = action;
      else if (rule === 'WebFetch') permission.webfetch = action;
      else warnings.add('not_mapped', `opencode: ${action} rule ${rule} has no opencode equivalent`);
    }
  };
  apply(profile.permissions.allow, 'allow');
  apply(profile.permissions.ask, 'ask');
  apply(denyRules(profile), 'deny');
  return permission;
}

/**
 * The profile's `${VAR}` references (Claude Code's syntax, the one lint asks for) in opencode's `{env:VAR}`: opencode
 * would pass `${GH_TOKEN}` to the server as those very characters.
 */
function opencodeRefs(text: string): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, '{env:$1}');
}

function opencodeMcp(profile: ProfileDoc, ctx: EmitContext): Record<string, Record<string, unknown>> {
  const servers: Record<string, Record<string, unknown>> = {};
  for (const [name, s] of profileMcpServers(profile)) {
    const environment = Object.fromEntries(Object.entries(s.env ?? {}).map(([k, v]) => [k, opencodeRefs(v)]));
    servers[name] =
      s.type === 'stdio'
        ? { type: 'local', command: [s.command ?? '', ...(s.args ?? [])].map(opencodeRefs), ...(Object.keys(environment).length ? { environment } : {}), enabled: true }
        : { type: 'remote', url: opencodeRefs(s.url ?? ''), enabled: true };
  }
  servers[RESERVED_MCP_SERVER] = { type: 'remote', url: brainstemMcpUrl(ctx), headers: brainstemHeaders((v) => `{env:${v}}`), enabled: true };
  return servers;
}
