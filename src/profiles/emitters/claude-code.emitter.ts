import { profileSandbox } from '../profile-sandbox';
import { HOOK_EVENTS, Hook, ProfileDoc } from '../profile.schema';
import {
  RESERVED_MCP_SERVER,
  Warnings,
  brainstemHeaders,
  brainstemMcpUrl,
  denyRules,
  json,
  markdown,
  profileMcpServers,
  reasoningEffort,
  uniq,
} from './emitter-support';
import { EmitContext, EmitResult, EmittedFile } from './emitter.types';

/** Values `effortLevel` accepts in `.claude/settings.json`. */
const EFFORT_LEVELS = ['low', 'medium', 'high', 'xhigh'];

type ClaudeHandler = { type: Hook['type']; command?: string; url?: string; prompt?: string; timeout: number };
type ClaudeMatcher = { matcher?: string; hooks: ClaudeHandler[] };

/**
 * claude-code, the most complete mapping: `.claude/settings.json` (permissions, hooks, model, effort, the
 * profile's agent as the main agent), `.claude/agents/<id>.md`, `.mcp.json` (with the reserved `brainstem`
 * server), `.claude/rules/<id>-<n>.md` per path rule, and local skills under `.claude/skills/<name>/`.
 */
export function emitClaudeCode(profile: ProfileDoc, ctx: EmitContext): EmitResult {
  const warnings = new Warnings();
  const model = claudeModel(profile, warnings);
  const files: EmittedFile[] = [
    { path: '.claude/settings.json', content: json(claudeSettings(profile, ctx, model, warnings)), merge: 'json' },
    { path: `.claude/agents/${ctx.profileId}.md`, content: agentFile(profile, ctx, model), merge: 'owned' },
    { path: '.mcp.json', content: json({ mcpServers: claudeMcpServers(profile, ctx) }), merge: 'json' },
    ...(profile.instructions.rules ?? []).map((rule, i) => ({
      path: `.claude/rules/${ctx.profileId}-${i + 1}.md`,
      content: markdown({ paths: [rule.glob] }, rule.instruction),
      merge: 'owned' as const,
    })),
    ...ctx.skills.flatMap((skill) =>
      skill.files.map((f) => ({ path: `.claude/skills/${skill.name}/${f.path}`, content: f.content, merge: 'owned' as const })),
    ),
  ];
  for (const skill of profile.skills) {
    if (skill.source !== 'local') warnings.add('skill_not_injected', `skill ${skill.name}: source ${skill.source} is not injected (local skills only)`);
  }
  return { files, warnings: warnings.list };
}

/** The model: `model.model`, else the first fallback (this emitter uses the first fallback: docs/architecture/decisions.md#runtime-mapping). */
export function claudeModel(profile: ProfileDoc, warnings?: Warnings): string | undefined {
  const [first, ...rest] = profile.model.fallback ?? [];
  if (rest.length) warnings?.add('fallback_ignored', `claude-code uses only the first fallback model; ${rest.join(', ')} ignored`);
  if (profile.model.model) return profile.model.model;
  if (first) warnings?.add('fallback_ignored', `model.model is not set; the first fallback ${first} is used as the model`);
  return first;
}

/** The fallback model passed when the model is set as well (`--fallback-model` for sessions). */
export function claudeFallbackModel(profile: ProfileDoc): string | undefined {
  return profile.model.model ? profile.model.fallback?.[0] : undefined;
}

/** The permission rule for every tool of the reserved server (claude's `mcp__<server>` form). */
export const BRAINSTEM_TOOLS_RULE = `mcp__${RESERVED_MCP_SERVER}`;

function claudeSettings(profile: ProfileDoc, ctx: EmitContext, model: string | undefined, warnings: Warnings): Record<string, unknown> {
  const { mode, ask } = profile.permissions;
  const deny = denyRules(profile);
  // Brainstem's own tools up front, so a heartbeat never becomes a permission prompt; a profile denying them all
  // keeps that (a deny rule wins over an allow in claude anyway, and one for a single tool still holds).
  const deniesBrainstem = deny.some((rule) => rule === BRAINSTEM_TOOLS_RULE || rule === `${BRAINSTEM_TOOLS_RULE}__*`);
  const allow = deniesBrainstem ? profile.permissions.allow : uniq([...profile.permissions.allow, BRAINSTEM_TOOLS_RULE]);
  const permissions: Record<string, unknown> = { defaultMode: mode };
  if (allow.length) permissions.allow = allow;
  if (deny.length) permissions.deny = deny;
  if (ask.length) permissions.ask = ask;
  const settings: Record<string, unknown> = { permissions };
  if (model) settings.model = model;
  // A list in settings (Claude Code 2.1: tried when the model is overloaded or unavailable); sessions also pass it
  // as --fallback-model, which older versions know and which wins over settings, so both hold the first only.
  const fallback = claudeFallbackModel(profile);
  if (fallback) settings.fallbackModel = [fallback];
  const effort = reasoningEffort(profile);
  if (effort !== undefined) {
    if (EFFORT_LEVELS.includes(effort)) settings.effortLevel = effort;
    else warnings.add('not_mapped', `claude-code effortLevel accepts ${EFFORT_LEVELS.join('|')}; effort ${effort} is not written`);
  }
  const hooks = claudeHooks(profile, warnings);
  if (Object.keys(hooks).length) settings.hooks = hooks;
  const sandbox = claudeSandbox(profile);
  if (sandbox) settings.sandbox = sandbox;
  settings.agent = ctx.profileId;
  if (profile.model.provider) warnings.add('model_not_mapped', 'claude-code has no provider setting; model.provider is ignored');
  return settings;
}

/**
 * The profile's sandbox as claude's own (`sandbox` in settings, Claude Code 2.1): on, Bash auto-allowed as the profile
 * says, its paths and hosts. Only for a profile with a `sandbox` section: one without leaves claude's sandbox to the
 * user's settings. Claude resolves paths as the profile does (absolute, `~/`, relative to the project, which is the
 * folder applied to), and takes hosts in srt's grammar, as the schema does. Claude merges `WebFetch(domain:…)` and
 * `Edit(…)` allow rules into the same lists: the profile's rules are not rewritten into them, since each also lets a
 * tool run unasked.
 */
export function claudeSandbox(profile: ProfileDoc): Record<string, unknown> | undefined {
  if (!profile.sandbox) return undefined;
  const s = profileSandbox(profile);
  const path = (p: string) => (p === '~' ? '~/' : p);
  const filesystem: Record<string, string[]> = {};
  if (s.allow_write.length) filesystem.allowWrite = s.allow_write.map(path);
  if (s.deny_read.length) filesystem.denyRead = s.deny_read.map(path);
  const network: Record<string, string[]> = {};
  if (s.network.allow.length) network.allowedDomains = s.network.allow;
  if (s.network.deny.length) network.deniedDomains = s.network.deny;
  return {
    enabled: true,
    autoAllowBashIfSandboxed: s.auto_allow_bash,
    ...(Object.keys(filesystem).length ? { filesystem } : {}),
    ...(Object.keys(network).length ? { network } : {}),
  };
}

export function claudeHooks(profile: ProfileDoc, warnings: Warnings): Record<string, ClaudeMatcher[]> {
  const out: Record<string, ClaudeMatcher[]> = {};
  for (const event of HOOK_EVENTS) {
    const groups: ClaudeMatcher[] = [];
    (profile.hooks[event] ?? []).forEach((hook, i) => {
      if (event === 'SessionStart' && hook.type !== 'command') {
        warnings.add('hook_skipped', `hooks.${event}[${i}]: claude-code runs only command handlers on SessionStart; this ${hook.type} handler is skipped`);
        return;
      }
      const matcher = hook.matcher ?? undefined;
      let group = groups.find((g) => g.matcher === matcher);
      if (!group) groups.push((group = matcher === undefined ? { hooks: [] } : { matcher, hooks: [] }));
      group.hooks.push(claudeHandler(hook));
    });
    if (groups.length) out[event] = groups;
  }
  return out;
}

function claudeHandler(hook: Hook): ClaudeHandler {
  switch (hook.type) {
    case 'command':
      return { type: 'command', command: hook.command ?? '', timeout: hook.timeout };
    case 'http':
      return { type: 'http', url: hook.url ?? '', timeout: hook.timeout };
    case 'prompt':
      return { type: 'prompt', prompt: hook.prompt ?? '', timeout: hook.timeout };
  }
}

export function claudeMcpServers(profile: ProfileDoc, ctx: EmitContext): Record<string, Record<string, unknown>> {
  const servers: Record<string, Record<string, unknown>> = {};
  for (const [name, s] of profileMcpServers(profile)) {
    servers[name] =
      s.type === 'stdio'
        ? { type: 'stdio', command: s.command ?? '', args: s.args ?? [], ...(s.env && Object.keys(s.env).length ? { env: s.env } : {}) }
        : { type: 'http', url: s.url ?? '' };
  }
  // `${VAR:-}`: claude started by hand, without a session's variables, still runs (the server refuses it, 401).
  servers[RESERVED_MCP_SERVER] = { type: 'http', url: brainstemMcpUrl(ctx), headers: brainstemHeaders((v) => `\${${v}:-}`) };
  return servers;
}

function agentFile(profile: ProfileDoc, ctx: EmitContext, model: string | undefined): string {
  const localSkills = profile.skills.filter((s) => s.source === 'local').map((s) => s.name);
  const frontmatter = {
    name: ctx.profileId,
    description: oneLine(profile.description || profile.name),
    tools: profile.tools.builtin ? profile.tools.builtin.join(', ') : undefined,
    disallowedTools: profile.tools.deny?.length ? profile.tools.deny.join(', ') : undefined,
    model,
    permissionMode: profile.permissions.mode,
    skills: localSkills.length ? localSkills : undefined,
  };
  return markdown(frontmatter, claudeSystemPrompt(profile));
}

/** The agent body: the system prompt, then each instruction file as an `@file` reference. */
export function claudeSystemPrompt(profile: ProfileDoc): string {
  const parts: string[] = [];
  const prompt = profile.instructions.system_prompt?.trim();
  if (prompt) parts.push(prompt);
  const files = profile.instructions.files ?? [];
  if (files.length) parts.push(files.map((f) => `@${f}`).join('\n'));
  return parts.join('\n\n');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
