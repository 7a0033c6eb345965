import { HOOK_EVENTS, HOOK_TYPES, HOOK_TIMEOUT_DEFAULT_S, Hook, HookEvent, HookType, PERMISSION_MODES, PermissionMode, ProfileDoc } from '../profile.schema';
import {
  Plain,
  ScanWarnings,
  idFrom,
  isPlain,
  nameFromId,
  readJson,
  readMarkdown,
  readMcpServers,
  stringList,
  validatedProposal,
  warnUnknownKeys,
} from './scan-support';
import { ScanFiles, ScanOptions, ScanResult } from './scan.types';
import { BRAINSTEM_TOOLS_RULE } from '../emitters/claude-code.emitter';
import { networkEntryProblem, sandboxPathProblem } from '../profile-sandbox.schema';

const SETTINGS = '.claude/settings.json';
const MCP = '.mcp.json';
const AGENT_FILE = /^\.claude\/agents\/([^/]+)\.md$/;
const RULE_FILE = /^\.claude\/rules\/([^/]+)\.md$/;
const SETTINGS_KEYS = ['permissions', 'model', 'fallbackModel', 'effortLevel', 'hooks', 'sandbox', 'agent'];
const SANDBOX_KEYS = ['enabled', 'autoAllowBashIfSandboxed', 'filesystem', 'network'];
const PERMISSION_KEYS = ['defaultMode', 'allow', 'deny', 'ask'];
const AGENT_KEYS = ['name', 'description', 'tools', 'disallowedTools', 'model', 'permissionMode', 'skills'];

/**
 * The inverse of the claude-code emitter: `.claude/settings.json`, the main agent's `.claude/agents/<id>.md`,
 * `.mcp.json` and `.claude/rules/*.md` back to the profile that emits them. Pure.
 */
export function scanClaudeCode(files: ScanFiles, opts: ScanOptions): ScanResult {
  const warnings = new ScanWarnings();
  const used: string[] = [];
  const settings = readJson(files, SETTINGS, warnings) ?? {};
  if (files.has(SETTINGS)) used.push(SETTINGS);
  warnUnknownKeys(settings, SETTINGS_KEYS, SETTINGS, warnings);

  const { id, agentPath } = mainAgent(files, settings, opts, warnings);
  const agent = agentPath ? readMarkdown(files.get(agentPath) as string, agentPath, warnings) : { frontmatter: {} as Plain, body: '' };
  if (agentPath) {
    used.push(agentPath);
    warnUnknownKeys(agent.frontmatter, AGENT_KEYS, agentPath, warnings, 'frontmatter ');
  }
  const fm = agent.frontmatter;

  const permissions = isPlain(settings.permissions) ? settings.permissions : {};
  warnUnknownKeys(permissions, PERMISSION_KEYS, SETTINGS, warnings, 'permissions.');
  const mode = permissionMode(permissions.defaultMode ?? fm.permissionMode, warnings);
  const toolsDeny = toolList(fm.disallowedTools, agentPath, 'disallowedTools', warnings);
  const builtin = toolList(fm.tools, agentPath, 'tools', warnings);

  const model = typeof settings.model === 'string' ? settings.model : typeof fm.model === 'string' ? fm.model : undefined;
  if (typeof settings.model === 'string' && typeof fm.model === 'string' && settings.model !== fm.model) {
    warnings.add('ambiguous', agentPath ?? SETTINGS, `the agent's model ${fm.model} differs from settings.json's ${settings.model}; the settings model is kept`);
  }
  // The emitter folds a lone fallback into the model, and writes only the first after a model.
  const fallback = stringList(settings.fallbackModel);
  if (settings.fallbackModel !== undefined && !fallback) warnings.add('malformed', SETTINGS, 'fallbackModel is not a list of model names; ignored');
  const options = typeof settings.effortLevel === 'string' ? { reasoning_effort: settings.effortLevel } : undefined;

  const mcpServers = readMcpServers(readJson(files, MCP, warnings)?.mcpServers, MCP, warnings, ['url']);
  if (files.has(MCP)) used.push(MCP);

  const rules = pathRules(files, id, used, warnings);
  const raw: Plain = {
    name: nameFromId(id),
    description: typeof fm.description === 'string' ? fm.description : '',
    runtime: 'claude-code',
    model: { ...(model ? { model } : {}), ...(model && fallback?.length ? { fallback } : {}), ...(options ? { options } : {}) },
    instructions: { ...agentInstructions(agent.body, files, agentPath, used, warnings), ...(rules.length ? { rules } : {}) },
    tools: { ...(builtin ? { builtin } : {}), ...(mcpServers ? { mcp_servers: mcpServers } : {}), ...(toolsDeny?.length ? { deny: toolsDeny } : {}) },
    permissions: {
      ...(mode ? { mode } : {}),
      // The rule allowing Brainstem's own tools is the emitter's, added on every apply (as the reserved server is).
      allow: rulesList(permissions.allow, 'allow', warnings).filter((rule) => rule !== BRAINSTEM_TOOLS_RULE),
      deny: permissionDeny(rulesList(permissions.deny, 'deny', warnings), toolsDeny ?? []),
      ask: rulesList(permissions.ask, 'ask', warnings),
    },
    skills: localSkills(fm.skills, files, opts, agentPath, warnings),
    hooks: readHooks(settings.hooks, warnings),
    ...readSandbox(settings.sandbox, warnings),
  };
  return { runtime: 'claude-code', profileId: id, profile: validatedProposal(raw), filesUsed: used, warnings: warnings.list };
}

/**
 * Claude's own sandbox settings back to the profile's section (the emitter's mapping, docs/reference/profile-schema.md#sandbox):
 * only when claude's sandbox is on. A path or host the profile's schema refuses is left out with a warning, so one odd
 * entry does not sink the whole proposal.
 */
function readSandbox(value: unknown, warnings: ScanWarnings): { sandbox?: Plain } {
  if (value === undefined) return {};
  if (!isPlain(value)) {
    warnings.add('malformed', SETTINGS, 'sandbox is not an object; ignored');
    return {};
  }
  if (value.enabled !== true) {
    warnings.add('not_mapped', SETTINGS, "sandbox: claude's sandbox is not enabled, so no sandbox section is proposed");
    return {};
  }
  warnUnknownKeys(value, SANDBOX_KEYS, SETTINGS, warnings, 'sandbox.');
  const fs = isPlain(value.filesystem) ? value.filesystem : {};
  const net = isPlain(value.network) ? value.network : {};
  warnUnknownKeys(fs, ['allowWrite', 'denyRead'], SETTINGS, warnings, 'sandbox.filesystem.');
  warnUnknownKeys(net, ['allowedDomains', 'deniedDomains'], SETTINGS, warnings, 'sandbox.network.');
  const kept = (v: unknown, key: string, problem: (x: string) => string | null): string[] | undefined => {
    if (v === undefined) return undefined;
    const list = stringList(v);
    if (!list) {
      warnings.add('malformed', SETTINGS, `sandbox.${key} is not a list of strings; ignored`);
      return undefined;
    }
    const good = list.filter((x) => problem(x) === null);
    for (const x of list.filter((y) => problem(y) !== null)) warnings.add('not_mapped', SETTINGS, `sandbox.${key}: ${JSON.stringify(x.slice(0, 200))} ${problem(x)}; not kept`);
    return good;
  };
  const allow_write = kept(fs.allowWrite, 'filesystem.allowWrite', sandboxPathProblem);
  const deny_read = kept(fs.denyRead, 'filesystem.denyRead', sandboxPathProblem);
  const allow = kept(net.allowedDomains, 'network.allowedDomains', (h) => networkEntryProblem(h, 'allow'));
  const deny = kept(net.deniedDomains, 'network.deniedDomains', (h) => networkEntryProblem(h, 'deny'));
  const network = { ...(allow?.length ? { allow } : {}), ...(deny?.length ? { deny } : {}) };
  return {
    sandbox: {
      ...(allow_write?.length ? { allow_write } : {}),
      ...(deny_read?.length ? { deny_read } : {}),
      ...(Object.keys(network).length ? { network } : {}),
      ...(typeof value.autoAllowBashIfSandboxed === 'boolean' ? { auto_allow_bash: value.autoAllowBashIfSandboxed } : {}),
    },
  };
}

/** `agent` in settings.json names the main agent; without it, the only (or first) agent file. */
function mainAgent(files: ScanFiles, settings: Plain, opts: ScanOptions, warnings: ScanWarnings): { id: string; agentPath?: string } {
  const agents = [...files.keys()].filter((p) => AGENT_FILE.test(p)).sort();
  if (typeof settings.agent === 'string' && settings.agent) {
    const path = `.claude/agents/${settings.agent}.md`;
    if (files.has(path)) return { id: settings.agent, agentPath: path };
    warnings.add('not_mapped', SETTINGS, `agent ${settings.agent} has no ${path}; instructions, tools and description are left empty`);
    return { id: idFrom(settings.agent) };
  }
  if (agents.length) {
    if (agents.length > 1) warnings.add('ambiguous', agents[0], `${agents.length} agent files and no "agent" in settings.json; the first is read: ${agents.join(', ')}`);
    return { id: (AGENT_FILE.exec(agents[0]) as RegExpExecArray)[1], agentPath: agents[0] };
  }
  return { id: idFrom(opts.projectDir?.split('/').filter(Boolean).pop()) };
}

/**
 * The agent body is the system prompt, then a paragraph of `@file` references (the instruction files). Without
 * an agent file, CLAUDE.md stands in as the system prompt (applying writes it to an agent file instead).
 */
function agentInstructions(body: string, files: ScanFiles, agentPath: string | undefined, used: string[], warnings: ScanWarnings): ProfileDoc['instructions'] {
  let text = body;
  if (!agentPath && files.has('CLAUDE.md')) {
    text = (files.get('CLAUDE.md') as string).trim();
    used.push('CLAUDE.md');
    warnings.add('lossy', 'CLAUDE.md', 'no agent file: CLAUDE.md is proposed as the system prompt; applying writes it to .claude/agents/<id>.md');
  }
  const paragraphs = text.split('\n\n');
  const last = paragraphs[paragraphs.length - 1].split('\n');
  if (last.length && last.every((l) => /^@\S+$/.test(l))) {
    const system = paragraphs.slice(0, -1).join('\n\n');
    return { ...(system.trim() ? { system_prompt: system } : {}), files: last.map((l) => l.slice(1)) };
  }
  return text.trim() ? { system_prompt: text } : {};
}

function permissionMode(value: unknown, warnings: ScanWarnings): PermissionMode | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && (PERMISSION_MODES as readonly string[]).includes(value)) return value as PermissionMode;
  warnings.add('not_mapped', SETTINGS, `permission mode ${String(value)} is not one of ${PERMISSION_MODES.join('|')}; the default is proposed`);
  return undefined;
}

/** Claude accepts a comma-separated string or a YAML list. */
function toolList(value: unknown, path: string | undefined, key: string, warnings: ScanWarnings): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.split(',').map((s) => s.trim()).filter(Boolean);
  const list = stringList(value);
  if (!list) warnings.add('malformed', path ?? '', `${key} is neither a string nor a list of strings; ignored`);
  return list;
}

function rulesList(value: unknown, key: string, warnings: ScanWarnings): string[] {
  if (value === undefined) return [];
  const list = stringList(value);
  if (!list) warnings.add('malformed', SETTINGS, `permissions.${key} is not a list of strings; ignored`);
  return list ?? [];
}

/**
 * The emitter writes `permissions.deny` then `tools.deny` into one list (deduplicated). When the agent's
 * disallowedTools are exactly the list's tail, they came from tools.deny and are split off; otherwise the whole
 * list stays in permissions.deny — the deduplication then re-emits it unchanged either way.
 */
function permissionDeny(deny: string[], toolsDeny: string[]): string[] {
  if (!toolsDeny.length || toolsDeny.length > deny.length) return deny;
  const tail = deny.slice(deny.length - toolsDeny.length);
  const head = deny.slice(0, deny.length - toolsDeny.length);
  const isTail = tail.every((t, i) => t === toolsDeny[i]) && !head.some((h) => toolsDeny.includes(h));
  return isTail ? head : deny;
}

/** Local skills, read from the project's own `.claude/skills/<name>` (where the emitter copies them). */
function localSkills(value: unknown, files: ScanFiles, opts: ScanOptions, agentPath: string | undefined, warnings: ScanWarnings): Plain[] {
  const names = value === undefined ? [] : stringList(value);
  if (!names) {
    warnings.add('malformed', agentPath ?? '', 'skills is not a list of names; ignored');
    return [];
  }
  return names.map((name) => {
    const dir = `.claude/skills/${name}`;
    if (!files.has(`${dir}/SKILL.md`)) warnings.add('not_mapped', agentPath ?? '', `skill ${name} has no ${dir}/SKILL.md in the project; lint will report it`);
    return { name, source: 'local', path: opts.projectDir ? `${opts.projectDir.replace(/\/+$/, '')}/${dir}` : dir };
  });
}

/**
 * Path rules: the profile's own `.claude/rules/<id>-<n>.md` in order of n, then any other rule file with one
 * `paths` glob (re-emitted under the profile's name). Rules without exactly one glob have no profile form.
 */
function pathRules(files: ScanFiles, id: string, used: string[], warnings: ScanWarnings): Array<{ glob: string; instruction: string }> {
  // The id comes from a file name in the scanned project: matched as a string prefix, never as a pattern.
  const own = `${id}-`;
  const paths = [...files.keys()].filter((p) => RULE_FILE.test(p));
  const order = (p: string) => {
    const name = (RULE_FILE.exec(p) as RegExpExecArray)[1];
    const n = name.startsWith(own) ? name.slice(own.length) : '';
    return /^\d+$/.test(n) ? Number(n) : Number.MAX_SAFE_INTEGER;
  };
  paths.sort((a, b) => order(a) - order(b) || a.localeCompare(b));
  const rules: Array<{ glob: string; instruction: string }> = [];
  for (const path of paths) {
    const { frontmatter, body } = readMarkdown(files.get(path) as string, path, warnings);
    const globs = typeof frontmatter.paths === 'string' ? [frontmatter.paths] : stringList(frontmatter.paths);
    if (!globs || globs.length !== 1 || !body.trim()) {
      warnings.add('not_mapped', path, 'a profile path rule needs exactly one `paths` glob and an instruction; not kept');
      continue;
    }
    if (order(path) === Number.MAX_SAFE_INTEGER) warnings.add('lossy', path, `kept as a path rule; applying writes it as .claude/rules/${id}-<n>.md`);
    rules.push({ glob: globs[0], instruction: body });
    used.push(path);
  }
  return rules;
}

/** settings.json hooks → profile hooks: each matcher group's handlers, flattened in order (the emitter regroups them). */
function readHooks(value: unknown, warnings: ScanWarnings): Partial<Record<HookEvent, Hook[]>> {
  if (value === undefined) return {};
  if (!isPlain(value)) {
    warnings.add('malformed', SETTINGS, 'hooks is not a mapping; ignored');
    return {};
  }
  warnUnknownKeys(value, HOOK_EVENTS, SETTINGS, warnings, 'hooks.');
  const out: Partial<Record<HookEvent, Hook[]>> = {};
  for (const event of HOOK_EVENTS) {
    const groups = value[event];
    if (groups === undefined) continue;
    const hooks: Hook[] = [];
    for (const group of Array.isArray(groups) ? groups : []) {
      if (!isPlain(group) || !Array.isArray(group.hooks)) continue;
      const matcher = typeof group.matcher === 'string' && group.matcher !== '' ? group.matcher : undefined;
      for (const h of group.hooks) {
        const hook = readHandler(h, event, warnings);
        if (hook) hooks.push(matcher === undefined ? hook : { ...hook, matcher });
      }
    }
    if (hooks.length) out[event] = hooks;
  }
  return out;
}

function readHandler(h: unknown, event: HookEvent, warnings: ScanWarnings): Hook | undefined {
  if (!isPlain(h) || typeof h.type !== 'string' || !(HOOK_TYPES as readonly string[]).includes(h.type)) {
    warnings.add('not_mapped', SETTINGS, `hooks.${event}: a handler of type ${isPlain(h) ? String(h.type) : '?'} has no profile form; not kept`);
    return undefined;
  }
  const type = h.type as HookType;
  // A handler without a timeout is proposed with the profile default, which the emitter then writes out.
  const timeout = typeof h.timeout === 'number' && Number.isInteger(h.timeout) && h.timeout >= 1 ? h.timeout : HOOK_TIMEOUT_DEFAULT_S;
  const field = type === 'command' ? 'command' : type === 'http' ? 'url' : 'prompt';
  return { type, [field]: typeof h[field] === 'string' ? h[field] : '', timeout } as Hook;
}
