import { posix } from 'node:path';
import { mcpRuleTarget } from './mcp-rules';
import { profileSandbox } from './profile-sandbox';
import { HOOK_EVENTS, Hook, HookEvent, MetadataField, ProfileDoc } from './profile.schema';

/** The profile linter: a pure function (profile, context) → findings. Findings never block a save; apply refuses errors. */

export type LintCode =
  | 'bypass_permissions_shared'
  | 'reserved_mcp_server_name'
  | 'mcp_missing_command'
  | 'mcp_missing_url'
  | 'inline_secret'
  | 'hook_handler_incomplete'
  | 'skill_source_unsupported'
  | 'skill_missing_file'
  | 'unknown_builtin_tool'
  | 'tool_allowed_and_denied'
  | 'version_outdated'
  | 'metadata_ignored'
  | 'runtime_unsupported'
  | 'loops_off'
  | 'loop_threshold_trivial'
  | 'worktree_copy_refused'
  | 'budget_day_below_session'
  | 'sandbox_host_allowed_and_denied'
  | 'sandbox_host_too_broad'
  | 'sandbox_loopback_allowed'
  | 'sandbox_write_too_wide'
  | 'sandbox_hides_cwd'
  | 'on_limit_unknown_profile'
  | 'on_limit_chained'
  | 'schema';

export interface LintFinding {
  path: string;
  code: LintCode;
  message: string;
}

export interface LintResult {
  valid: boolean;
  errors: LintFinding[];
  warnings: LintFinding[];
}

export interface LintContext {
  /** Shared profiles may not bypass permissions; a profile is shared unless its owner marked it personal. */
  shared: boolean;
  /** Service-managed keys the file set by hand. */
  metadataKeys: readonly MetadataField[];
  /** Whether `<skill path>/SKILL.md` exists; injected so the linter stays free of fs. */
  skillFileExists: (skillPath: string) => boolean;
  /**
   * Another profile's `on_limit.fallback_profile` by its id: null when it names none, undefined when there is no such
   * profile. Absent: references to other profiles are not checked (a document linted on its own).
   */
  fallbackOf?: (profileId: string) => string | null | undefined;
  /** The id of the profile linted, when it has one: it cannot be its own fallback. */
  selfId?: string;
}

/** The service's own MCP server name (docs/architecture/decisions.md#names): profiles must not reuse it. */
export const RESERVED_MCP_SERVER = 'brainstem';

export const KNOWN_BUILTIN_TOOLS: readonly string[] = [
  'Read', 'Write', 'Edit', 'MultiEdit', 'Bash', 'Glob', 'Grep', 'LS', 'WebSearch', 'WebFetch', 'Agent', 'Task',
  'TodoWrite', 'NotebookRead', 'NotebookEdit', 'Skill', 'SlashCommand', 'BashOutput', 'KillShell',
];

const SECRET_PATTERNS: readonly RegExp[] = [
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/, // OpenAI, Anthropic
  /\bgh[pousr]_[A-Za-z0-9]{20,}/, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}/,
  /\bglpat-[A-Za-z0-9_-]{20,}/, // GitLab
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/, // Slack
  /\bAKIA[0-9A-Z]{16}\b/, // AWS access key id
  /\bAIza[0-9A-Za-z_-]{35}/, // Google API key
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
];
/** ${VAR}, ${VAR:-default}, $VAR and opencode's {env:VAR} are references, not secrets. */
const ENV_REFERENCE = /\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{env:[^}]*\}/g;
const SECRET_ENV_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|CREDENTIALS?)$/i;
const HIGH_ENTROPY_MIN_LENGTH = 32;
const HIGH_ENTROPY_BITS = 4.0;

export function lintProfile(doc: ProfileDoc, ctx: LintContext): LintResult {
  const errors: LintFinding[] = [];
  const warnings: LintFinding[] = [];
  const error = (path: string, code: LintCode, message: string) => errors.push({ path, code, message });
  const warn = (path: string, code: LintCode, message: string) => warnings.push({ path, code, message });

  if (doc.version === 1) warn('version', 'version_outdated', 'version 1 is outdated; version 2 is recommended');
  for (const key of ctx.metadataKeys) warn(key, 'metadata_ignored', `${key} is managed by the service; the value in the file is ignored`);

  if (doc.permissions.mode === 'bypassPermissions' && ctx.shared) {
    error('permissions.mode', 'bypass_permissions_shared', 'bypassPermissions is not allowed in a shared profile (set the profile\'s scope to personal to use it yourself)');
  }

  for (const [name, server] of Object.entries(doc.tools.mcp_servers ?? {})) {
    const at = `tools.mcp_servers.${name}`;
    if (name.trim().toLowerCase() === RESERVED_MCP_SERVER) {
      error(at, 'reserved_mcp_server_name', `the MCP server name "${RESERVED_MCP_SERVER}" is reserved for the service's own server`);
    }
    if (server.type === 'stdio' && !server.command) error(`${at}.command`, 'mcp_missing_command', 'a stdio server needs a command');
    if (server.type === 'http' && !server.url) error(`${at}.url`, 'mcp_missing_url', 'an http server needs a url');
    for (const [key, value] of Object.entries(server.env ?? {})) {
      if (looksLikeSecret(value) || (SECRET_ENV_NAME.test(key) && literalPart(value).trim().length >= 8)) {
        error(`${at}.env.${key}`, 'inline_secret', 'looks like an inlined secret; reference an environment variable instead (${VAR})');
      }
    }
    (server.args ?? []).forEach((arg, i) => {
      if (looksLikeSecret(arg)) error(`${at}.args[${i}]`, 'inline_secret', 'looks like an inlined secret; reference an environment variable instead');
    });
    if (server.url && looksLikeSecret(server.url)) error(`${at}.url`, 'inline_secret', 'the url carries what looks like a secret');
  }

  forEachHook(doc, (_event, hook, at) => {
    const needed = hook.type === 'command' ? 'command' : hook.type === 'http' ? 'url' : 'prompt';
    if (!hook[needed]) error(`${at}.${needed}`, 'hook_handler_incomplete', `a ${hook.type} handler needs ${needed}`);
    for (const field of ['command', 'url'] as const) {
      const value = hook[field];
      if (value && looksLikeSecret(value)) error(`${at}.${field}`, 'inline_secret', 'looks like an inlined secret; reference an environment variable instead');
    }
  });

  doc.skills.forEach((skill, i) => {
    if (skill.source !== 'local') {
      warn(`skills[${i}].source`, 'skill_source_unsupported', `source ${skill.source} is not injected into workers (local skills only)`);
    }
    if (skill.path && !ctx.skillFileExists(skill.path)) error(`skills[${i}].path`, 'skill_missing_file', `no SKILL.md in ${skill.path}`);
  });

  const denied = new Set([...(doc.tools.deny ?? []), ...doc.permissions.deny]);
  (doc.tools.builtin ?? []).forEach((tool, i) => {
    if (!KNOWN_BUILTIN_TOOLS.includes(tool)) warn(`tools.builtin[${i}]`, 'unknown_builtin_tool', `unknown built-in tool ${tool}`);
    if (denied.has(tool)) warn(`tools.builtin[${i}]`, 'tool_allowed_and_denied', `${tool} is both allowed and denied (deny wins)`);
  });

  lintWorktree(doc, error);
  lintRuntime(doc, warn);
  lintLoops(doc, warn);
  lintBudget(doc, warn);
  lintSandbox(doc, error, warn);
  lintOnLimit(doc, ctx, error);
  return { valid: errors.length === 0, errors, warnings };
}

/**
 * `on_limit.fallback_profile` names a profile that exists, not this one, and one with no fallback of its own: a chain
 * could go round in circles, starting a session at each limit.
 */
function lintOnLimit(doc: ProfileDoc, ctx: LintContext, error: (path: string, code: LintCode, message: string) => void): void {
  const id = doc.on_limit?.fallback_profile;
  if (id === undefined || !ctx.fallbackOf) return;
  const at = 'on_limit.fallback_profile';
  if (id === ctx.selfId) return error(at, 'on_limit_chained', 'a profile cannot be its own fallback');
  const next = ctx.fallbackOf(id);
  if (next === undefined) return error(at, 'on_limit_unknown_profile', `no profile ${JSON.stringify(id)}: name an existing profile's id`);
  if (next !== null) error(at, 'on_limit_chained', `profile ${JSON.stringify(id)} has a fallback of its own (${JSON.stringify(next)}); a fallback profile cannot have one`);
}

/** The patterns a `loops:` section can set, each a count or a time (docs/guide/loops.md). */
const LOOP_PATTERN_FIELDS = ['repeated_call', 'alternation', 'repeated_failure', 'repeated_text', 'no_progress_s'] as const;
/** Counts at which 1 fires on every call, failure or turn: any worker would be looping. */
const LOOP_COUNT_FIELDS = ['repeated_call', 'alternation', 'repeated_failure', 'repeated_text'] as const;

function lintLoops(doc: ProfileDoc, warn: Report): void {
  const loops = doc.loops;
  if (!loops) return;
  if (LOOP_PATTERN_FIELDS.every((k) => loops[k] === 0)) warn('loops', 'loops_off', "every loop pattern is 0: this profile's workers are never noticed going round in circles");
  for (const k of LOOP_COUNT_FIELDS) {
    if (loops[k] === 1) warn(`loops.${k}`, 'loop_threshold_trivial', `1 counts every single ${k === 'repeated_text' ? 'turn' : k === 'repeated_failure' ? 'failure' : 'call'} as a loop; use 0 to turn the pattern off`);
  }
}

/** A day's budget below one session's: the day's is reached first, so the per-session one never holds anything. */
function lintBudget(doc: ProfileDoc, warn: Report): void {
  const { per_session, per_day } = doc.budget ?? {};
  for (const unit of ['tokens', 'usd'] as const) {
    const session = per_session?.[unit];
    const day = per_day?.[unit];
    if (session !== undefined && day !== undefined && day < session) {
      warn(`budget.per_day.${unit}`, 'budget_day_below_session', `the day's ${unit} (${day}) is below one session's (${session}): the session budget never applies`);
    }
  }
}

type Report = (path: string, code: LintCode, message: string) => void;

/** Second-level labels under which anyone registers a name: `*.co.uk` allows every company in the UK. */
const PUBLIC_SECOND_LEVEL = new Set(['co', 'com', 'net', 'org', 'gov', 'edu', 'ac', 'or', 'ne', 'go', 'gob', 'nic', 'ltd', 'plc']);
/** Folders that hold home directories: a worker that writes one writes every user's files. */
const HOMES_PARENTS = new Set(['/home', '/Users', '/root']);

/** An entry's host and port as written (`[::1]:443` → `[::1]`, 443); the schema has checked its grammar. */
function hostPort(entry: string): { host: string; port: string | null } {
  const colon = entry.startsWith('[') ? entry.indexOf(':', entry.indexOf(']')) : entry.indexOf(':');
  return colon === -1 ? { host: entry.toLowerCase(), port: null } : { host: entry.slice(0, colon).toLowerCase(), port: entry.slice(colon + 1) };
}

/** Whether deny entry `deny` refuses every connection allow entry `allow` lets through (srt: deny always wins). */
function deniedEntirely(allow: string, deny: string): boolean {
  const a = hostPort(allow);
  const d = hostPort(deny);
  if (d.port !== null && d.port !== a.port) return false;
  if (d.host === '*') return true;
  if (d.host.startsWith('*.')) return a.host.endsWith(d.host.slice(1));
  return a.host === d.host;
}

/** Where a profile's path leads, as far as is known without the machine: from `/`, from home, or from the cwd. */
function pathPlace(p: string): { from: 'root' | 'home' | 'cwd'; rest: string } {
  const clean = (x: string) => posix.normalize(x).replace(/(.)\/+$/, '$1');
  if (p === '~' || p.startsWith('~/')) return { from: 'home', rest: clean(p.slice(2) || '.') };
  if (p.startsWith('/')) return { from: 'root', rest: clean(p) };
  return { from: 'cwd', rest: clean(p) };
}

const above = (rest: string): boolean => rest === '..' || rest.startsWith('../');
/** Only `..` parts: the cwd's parent, grandparent… which hold the cwd. */
const onlyUp = (rest: string): boolean => rest.split('/').every((part) => part === '..');

/**
 * The sandbox section: a host allowed and denied (deny wins, so the allow does nothing), an allow as wide as a public
 * suffix or every port of this machine, write access to a home directory or more (the sandbox then contains nothing
 * worth containing), and a hidden path that hides the worker's own folder.
 */
function lintSandbox(doc: ProfileDoc, error: Report, warn: Report): void {
  if (!doc.sandbox) return;
  const s = profileSandbox(doc);
  s.network.allow.forEach((entry, i) => {
    const at = `sandbox.network.allow[${i}]`;
    const j = s.network.deny.findIndex((d) => deniedEntirely(entry, d));
    if (j !== -1) {
      warn(at, 'sandbox_host_allowed_and_denied', `${entry} is denied by sandbox.network.deny[${j}] (${s.network.deny[j]}); deny always wins, so this allow does nothing`);
      return;
    }
    const { host, port } = hostPort(entry);
    const labels = host.split('.');
    if (host.startsWith('*.') && labels.length === 3 && PUBLIC_SECOND_LEVEL.has(labels[1])) {
      warn(at, 'sandbox_host_too_broad', `${entry} allows every name registered under .${labels.slice(1).join('.')}; name the hosts the work needs`);
    } else if (port === null && (host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host))) {
      warn(at, 'sandbox_loopback_allowed', `${entry} lets workers reach every service on this machine's ${host}; add the port it needs (${host}:5432); Brainstem's own URL is allowed already`);
    }
  });
  s.allow_write.forEach((p, i) => {
    const { from, rest } = pathPlace(p);
    const at = `sandbox.allow_write[${i}]`;
    if (from === 'root' && rest === '/') error(at, 'sandbox_write_too_wide', 'lets workers write every file you can: the sandbox would contain nothing');
    else if (from === 'root' && HOMES_PARENTS.has(rest)) error(at, 'sandbox_write_too_wide', `${rest} holds home directories: workers could write your shell's startup files and credentials`);
    else if (from === 'home' && (rest === '.' || above(rest))) {
      error(at, 'sandbox_write_too_wide', `${p} is your home directory${rest === '.' ? '' : ' or above it'}: workers could write your shell's startup files and credentials; name the folders they need (~/.npm)`);
    }
  });
  s.deny_read.forEach((p, i) => {
    const { from, rest } = pathPlace(p);
    const at = `sandbox.deny_read[${i}]`;
    if (from === 'cwd' && (rest === '.' || onlyUp(rest))) warn(at, 'sandbox_hides_cwd', `${p} is the worker's own folder${rest === '.' ? '' : ' or holds it'}: hidden, the worker cannot read its own files`);
    else if ((from === 'root' && rest === '/') || (from === 'home' && (rest === '.' || above(rest)))) {
      warn(at, 'sandbox_hides_cwd', `${p} holds the worker's folder and its runtime's own state: hidden, the worker cannot start or read its files`);
    }
  });
}

/** A worktree's setup command runs with the worker's environment: a secret belongs there, not in the profile. */
function lintWorktree(doc: ProfileDoc, error: Report): void {
  const setup = doc.worktree?.setup;
  if (setup && looksLikeSecret(setup)) error('worktree.setup', 'inline_secret', 'looks like an inlined secret; reference an environment variable instead');
  (doc.worktree?.copy ?? []).forEach((path, i) => {
    if (path.split('/').filter((p) => p !== '' && p !== '.')[0] === '.git') {
      error(`worktree.copy[${i}]`, 'worktree_copy_refused', "the repository's .git is never copied: it would cut the worktree off from its repository");
    }
  });
}

/** What each runtime cannot express (shared/runtime-formats.md); `auto` is linted as claude-code, the usual pick. */
function lintRuntime(doc: ProfileDoc, warn: Report): void {
  const unsupported = (path: string, what: string) => warn(path, 'runtime_unsupported', `${doc.runtime} ${what}`);
  switch (doc.runtime) {
    case 'auto':
    case 'claude-code':
      forEachHook(doc, (event, hook, at) => {
        if (event === 'SessionStart' && hook.type !== 'command') unsupported(`${at}.type`, 'accepts only command handlers on SessionStart');
      });
      // tools.deny is merged into permissions.deny, so its Write(path) rules are as inert.
      for (const [at, rules] of ruleLists(doc)) {
        rules.forEach((rule, i) => {
          if (/^Write\(.+\)$/.test(rule)) unsupported(`${at}[${i}]`, 'ignores path rules on Write (use Edit(...))');
        });
      }
      return;
    case 'codex': {
      // Rules on the profile's own MCP servers become their approval settings; no other rule maps.
      if (doc.tools.builtin) unsupported('tools.builtin', 'does not map the built-in tool allowlist');
      const servers = Object.keys(doc.tools.mcp_servers ?? {});
      for (const [at, rules] of ruleLists(doc)) {
        rules.forEach((rule, i) => {
          if (!mcpRuleTarget(rule, servers)) unsupported(`${at}[${i}]`, `does not map the rule ${rule} (only rules on the profile's MCP servers)`);
        });
      }
      // The codex emitter writes no hooks at all: a guard hook of any type would silently not run.
      for (const event of HOOK_EVENTS) {
        if (doc.hooks[event]?.length) unsupported(`hooks.${event}`, 'hooks are not applied (configure codex hooks by hand)');
      }
      return;
    }
    case 'gemini-cli':
      if (['bypassPermissions', 'auto', 'dontAsk'].includes(doc.permissions.mode)) {
        unsupported('permissions.mode', `has no settings equivalent of ${doc.permissions.mode}`);
      }
      if (doc.permissions.ask.length > 0) unsupported('permissions.ask', 'does not map ask rules');
      for (const name of Object.keys(doc.tools.mcp_servers ?? {})) {
        if (name.includes('_')) unsupported(`tools.mcp_servers.${name}`, 'mis-parses "_" in MCP server names');
      }
      forEachHook(doc, (_event, hook, at) => {
        if (hook.type !== 'command') unsupported(`${at}.type`, 'supports only command hook handlers');
      });
      return;
    case 'opencode':
      for (const event of HOOK_EVENTS) {
        if (doc.hooks[event]?.length) unsupported(`hooks.${event}`, 'has no declarative hooks (plugins only)');
      }
      return;
  }
}

/** Every list of permission rules, with its path: permissions.allow/deny/ask and tools.deny. */
function ruleLists(doc: ProfileDoc): Array<readonly [string, readonly string[]]> {
  return [...(['allow', 'deny', 'ask'] as const).map((l) => [`permissions.${l}`, doc.permissions[l]] as const), ['tools.deny', doc.tools.deny ?? []] as const];
}

function forEachHook(doc: ProfileDoc, visit: (event: HookEvent, hook: Hook, at: string) => void): void {
  for (const event of HOOK_EVENTS) doc.hooks[event]?.forEach((hook, i) => visit(event, hook, `hooks.${event}[${i}]`));
}

function literalPart(value: string): string {
  return value.replace(ENV_REFERENCE, '');
}

/** Known key formats, or a long, high-entropy token outside any environment reference. */
export function looksLikeSecret(value: string): boolean {
  const literal = literalPart(value);
  if (SECRET_PATTERNS.some((p) => p.test(literal))) return true;
  return literal
    .split(/[\s"'`=:,;@/?&()[\]{}<>|]+/)
    .some((token) => token.length >= HIGH_ENTROPY_MIN_LENGTH && /[A-Za-z]/.test(token) && /\d/.test(token) && entropy(token) >= HIGH_ENTROPY_BITS);
}

/** Shannon entropy in bits per character. */
function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / s.length) * Math.log2(n / s.length);
  return bits;
}
