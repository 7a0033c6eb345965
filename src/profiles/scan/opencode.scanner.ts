import { OPENCODE_MCP_NAMING, mcpRuleName, mcpRuleTarget } from '../mcp-rules';
import { PermissionMode } from '../profile.schema';
import { Plain, ScanWarnings, idFrom, isPlain, isReserved, nameFromId, readInstructionsMarkdown, readJson, readMarkdown, stringRecord, validatedProposal, warnUnknownKeys } from './scan-support';
import { McpServer } from '../profile.schema';
import { ScanFiles, ScanOptions, ScanResult } from './scan.types';

const CONFIG = 'opencode.json';
const AGENT_FILE = /^\.opencode\/agent\/([^/]+)\.md$/;
const CONFIG_KEYS = ['$schema', 'default_agent', 'mcp'];
const AGENT_KEYS = ['description', 'mode', 'model', 'permission'];

type Action = 'allow' | 'ask' | 'deny';
const ACTIONS: readonly Action[] = ['allow', 'ask', 'deny'];
/** The opencode emitter's base actions per mode, in the order a mode is preferred when several fit. */
const BASES: Array<[PermissionMode, { edit: Action; bash: Action; webfetch: Action }]> = [
  ['acceptEdits', { edit: 'allow', bash: 'ask', webfetch: 'allow' }],
  ['default', { edit: 'ask', bash: 'ask', webfetch: 'ask' }],
  ['plan', { edit: 'deny', bash: 'ask', webfetch: 'allow' }],
  ['bypassPermissions', { edit: 'allow', bash: 'allow', webfetch: 'allow' }],
];

/**
 * The inverse of the opencode emitter: `opencode.json` (default agent, MCP) and `.opencode/agent/<id>.md`.
 * The permission block comes back as the mode whose base actions fit best plus allow/ask/deny rules
 * (`Edit`, `WebFetch`, `Bash(<pattern>)`, and `mcp__<server>__<tool>` for keys on the MCP servers' tools). Tool lists, hooks, rules' split between tools.deny and
 * permissions.deny, and skills are not in opencode files. Pure.
 */
export function scanOpencode(files: ScanFiles, opts: ScanOptions): ScanResult {
  const warnings = new ScanWarnings();
  const used: string[] = [];
  const config = readJson(files, CONFIG, warnings) ?? {};
  if (files.has(CONFIG)) used.push(CONFIG);
  warnUnknownKeys(config, CONFIG_KEYS, CONFIG, warnings);

  const agents = [...files.keys()].filter((p) => AGENT_FILE.test(p)).sort();
  let id: string;
  let agentPath: string | undefined;
  if (typeof config.default_agent === 'string' && files.has(`.opencode/agent/${config.default_agent}.md`)) {
    id = config.default_agent;
    agentPath = `.opencode/agent/${id}.md`;
  } else if (agents.length) {
    if (agents.length > 1) warnings.add('ambiguous', agents[0], `${agents.length} agent files and no matching default_agent; the first is read`);
    agentPath = agents[0];
    id = (AGENT_FILE.exec(agentPath) as RegExpExecArray)[1];
  } else id = idFrom(typeof config.default_agent === 'string' ? config.default_agent : opts.projectDir?.split('/').filter(Boolean).pop());

  const agent = agentPath ? readMarkdown(files.get(agentPath) as string, agentPath, warnings) : { frontmatter: {} as Plain, body: '' };
  if (agentPath) {
    used.push(agentPath);
    warnUnknownKeys(agent.frontmatter, AGENT_KEYS, agentPath, warnings, 'frontmatter ');
  }
  const fm = agent.frontmatter;
  const mcpServers = readMcp(config.mcp, warnings);
  const { mode, allow, ask, deny } = readPermission(fm.permission, Object.keys(mcpServers ?? {}), agentPath ?? CONFIG, warnings);
  const raw: Plain = {
    name: nameFromId(id),
    description: typeof fm.description === 'string' ? fm.description : '',
    runtime: 'opencode',
    model: typeof fm.model === 'string' ? { model: fm.model } : {},
    instructions: readInstructionsMarkdown(agent.body),
    tools: mcpServers ? { mcp_servers: mcpServers } : {},
    permissions: { mode, allow, ask, deny },
  };
  return { runtime: 'opencode', profileId: id, profile: validatedProposal(raw), filesUsed: used, warnings: warnings.list };
}

function isAction(v: unknown): v is Action {
  return typeof v === 'string' && (ACTIONS as readonly string[]).includes(v);
}

/**
 * The mode is the one whose base fits the `edit`, `bash['*']` and `webfetch` actions best (the catch-all bash
 * first); what still differs becomes `Bash` / `Edit` / `WebFetch` rules. Bash
 * patterns become `Bash(<pattern>)` rules, keys on the MCP servers' tools `mcp__…` rules; the emitter writes both
 * allow, then ask, then deny, so entries in that order re-emit identically (any other order is warned: opencode
 * applies the last matching one).
 */
function readPermission(
  value: unknown,
  servers: readonly string[],
  path: string,
  warnings: ScanWarnings,
): { mode: PermissionMode; allow: string[]; ask: string[]; deny: string[] } {
  const lists: Record<Action, string[]> = { allow: [], ask: [], deny: [] };
  if (!isPlain(value)) {
    if (value !== undefined) warnings.add('malformed', path, 'permission is not a mapping; ignored');
    return { mode: 'acceptEdits', ...lists };
  }
  const mcpKeys = Object.keys(value).filter((k) => mcpRuleTarget(k, servers, OPENCODE_MCP_NAMING));
  warnUnknownKeys(value, ['edit', 'bash', 'webfetch', ...mcpKeys], path, warnings, 'permission.');
  const bashMap: Record<string, unknown> = isPlain(value.bash) ? value.bash : isAction(value.bash) ? { '*': value.bash } : {};
  const seen = { edit: isAction(value.edit) ? value.edit : undefined, bash: isAction(bashMap['*']) ? bashMap['*'] : undefined, webfetch: isAction(value.webfetch) ? value.webfetch : undefined };
  const score = (b: { edit: Action; bash: Action; webfetch: Action }) =>
    (seen.bash !== undefined && seen.bash !== b.bash ? 10 : 0) + (seen.edit !== undefined && seen.edit !== b.edit ? 1 : 0) + (seen.webfetch !== undefined && seen.webfetch !== b.webfetch ? 1 : 0);
  const [mode, base] = BASES.reduce((best, cur) => (score(cur[1]) < score(best[1]) ? cur : best));
  if (seen.bash !== undefined && seen.bash !== base.bash) {
    // A plain `Bash` rule resets the patterns to `{'*': action}` when applied, wiping patterns of earlier lists.
    lists[seen.bash].push('Bash');
    const earlier = Object.entries(bashMap).filter(([p, a]) => p !== '*' && isAction(a) && ACTIONS.indexOf(a) < ACTIONS.indexOf(seen.bash as Action));
    if (earlier.length) warnings.add('lossy', path, `bash '*': ${seen.bash} is re-emitted as a Bash rule, which drops the earlier patterns ${earlier.map(([p]) => p).join(', ')}`);
  }
  if (seen.edit !== undefined && seen.edit !== base.edit) lists[seen.edit].push('Edit');
  if (seen.webfetch !== undefined && seen.webfetch !== base.webfetch) lists[seen.webfetch].push('WebFetch');
  const bashEntries = Object.entries(bashMap).filter(([pattern]) => pattern !== '*');
  readOrdered(bashEntries, { label: 'bash', kind: 'patterns', rule: (pattern) => `Bash(${pattern})` }, path, lists, warnings);
  const mcpEntries = mcpKeys.map((key) => [key, value[key]] as const);
  readOrdered(mcpEntries, { label: 'permission', kind: 'MCP tool keys', rule: (key) => mcpRuleName(mcpRuleTarget(key, servers, OPENCODE_MCP_NAMING)!) }, path, lists, warnings);
  return { mode, ...lists };
}

/** Entries the emitter writes allow, then ask, then deny, as rules; another order is warned, since it would change. */
function readOrdered(
  entries: ReadonlyArray<readonly [string, unknown]>,
  how: { label: string; kind: string; rule: (key: string) => string },
  path: string,
  lists: Record<Action, string[]>,
  warnings: ScanWarnings,
): void {
  let last = 0;
  for (const [key, action] of entries) {
    if (!isAction(action)) {
      warnings.add('malformed', path, `${how.label} ${key}: ${String(action)} is not allow|ask|deny; ignored`);
      continue;
    }
    if (ACTIONS.indexOf(action) < last) warnings.add('lossy', path, `${how.label} ${key}: ${how.kind} are re-emitted allow, ask, deny; this order changes`);
    last = Math.max(last, ACTIONS.indexOf(action));
    lists[action].push(how.rule(key));
  }
}

function readMcp(value: unknown, warnings: ScanWarnings): Record<string, McpServer> | undefined {
  if (value === undefined) return undefined;
  if (!isPlain(value)) {
    warnings.add('malformed', CONFIG, 'mcp is not a mapping; ignored');
    return undefined;
  }
  const out: Record<string, McpServer> = {};
  for (const [name, s] of Object.entries(value)) {
    if (isReserved(name)) continue;
    if (!isPlain(s)) continue;
    if (s.enabled === false) warnings.add('lossy', CONFIG, `MCP server ${name} is disabled; a profile has no disabled servers, so applying enables it`);
    if (s.type === 'local' && Array.isArray(s.command) && s.command.length && s.command.every((c) => typeof c === 'string')) {
      const [command, ...args] = (s.command as string[]).map(profileRefs);
      const env = Object.fromEntries(Object.entries(stringRecord(s.environment) ?? {}).map(([k, v]) => [k, profileRefs(v)]));
      out[name] = { type: 'stdio', command, args, ...(Object.keys(env).length ? { env } : {}) };
    } else if (s.type === 'remote' && typeof s.url === 'string') {
      out[name] = { type: 'http', url: profileRefs(s.url) };
      if (s.headers !== undefined) warnings.add('lossy', CONFIG, `MCP server ${name}: headers cannot be expressed in a profile and are not kept`);
    } else warnings.add('not_mapped', CONFIG, `MCP server ${name} is neither local with a command nor remote with a URL; ignored`);
  }
  return Object.keys(out).length ? out : undefined;
}

/** opencode's `{env:VAR}` as the profile's `${VAR}` (the emitter writes the one for the other). */
function profileRefs(text: string): string {
  return text.replace(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, '${$1}');
}
