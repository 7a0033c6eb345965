import { posix } from 'node:path';
import { escape, minimatch } from 'minimatch';

/**
 * Claude Code's permission rules (code.claude.com/docs/en/permissions), read as a deny list: `Bash` or `Bash(*)` (the
 * whole tool), `Bash(npm run test *)` (`*` is any text, `/` and spaces included), `Bash(npm run test:*)` (the legacy
 * form of the same), `Read`/`Edit(<gitignore-style path>)`, `WebFetch(domain:example.com)`, `mcp__server`,
 * `mcp__server__tool`, `mcp__server__*`. Where Claude Code leaves a choice open, the reading here is the one that
 * denies more: a deny that matches too little lets through what the profile forbids. Pure, and no rule text is ever
 * compiled into a RegExp: Bash patterns are walked, paths go to minimatch.
 */
export interface ToolUse {
  tool: string;
  input: unknown;
}

/** Where the tool use runs (both absolute): relative path rules and paths are read from `cwd` (the project), `~/` from `home`. */
export interface RuleScope {
  cwd: string;
  home: string;
}

/** The first rule that matches the tool use, if any. */
export function deniedBy(rules: readonly string[], use: ToolUse, scope: RuleScope): string | null {
  const subject = new Subject(use, scope);
  return rules.find((r) => subject.matches(r)) ?? null;
}

export function ruleMatches(rule: string, use: ToolUse, scope: RuleScope): boolean {
  return new Subject(use, scope).matches(rule);
}

/** One tool use, read once for every rule it is held against. */
class Subject {
  private readonly input: Record<string, unknown>;
  private commands: string[] | null | undefined;
  private paths: string[] | null = null;

  constructor(
    private readonly use: ToolUse,
    private readonly scope: RuleScope,
  ) {
    this.input = isRecord(use.input) ? use.input : {};
  }

  matches(rule: string): boolean {
    const { tool, specifier } = parseRule(rule);
    if (!toolCovered(tool, this.use.tool)) return false;
    if (specifier === null || specifier === '' || specifier === '*') return true;
    if (tool === 'Bash') return bashMatches(specifier, this.commandForms());
    if (PATH_TOOLS.has(tool)) return pathMatches(pathGlob(specifier, this.scope), this.pathForms());
    if (tool === 'WebFetch' && specifier.startsWith('domain:')) return domainMatches(specifier.slice('domain:'.length), this.input);
    // Any other tool's specifier (Agent(Explore), Tool(param:value)): any of the input's text, alone or as `key:value`.
    const pattern = pieces(specifier);
    return Object.entries(this.input).some(([k, v]) => typeof v === 'string' && (piecesMatch(pattern, v) || piecesMatch(pattern, `${k}:${v}`)));
  }

  private commandForms(): string[] | null {
    if (this.commands === undefined) this.commands = typeof this.input.command === 'string' ? commandCandidates(this.input.command) : [];
    return this.commands;
  }

  /** The paths named and every directory above them: as in gitignore, a matched directory covers what is inside it. */
  private pathForms(): string[] {
    this.paths ??= pathsOf(this.input, this.scope).flatMap((p) => [p, ...ancestors(p)]);
    return this.paths;
  }
}

function parseRule(rule: string): { tool: string; specifier: string | null } {
  const text = rule.trim();
  const open = text.indexOf('(');
  if (open < 0) return { tool: text, specifier: null };
  // An unclosed `Bash(rm -rf *` still means what it says.
  return { tool: text.slice(0, open), specifier: text.slice(open + 1, text.endsWith(')') ? -1 : undefined) };
}

/** "Edit rules apply to all built-in tools that edit files", Read rules (best effort) to those that read them. */
const TOOL_FAMILIES: ReadonlyMap<string, readonly string[]> = new Map([
  ['Edit', ['Edit', 'MultiEdit', 'Write', 'NotebookEdit']],
  ['Read', ['Read', 'Grep', 'Glob', 'LS', 'NotebookRead']],
]);
/** Tools whose specifier is a path. Write and NotebookEdit rules are not consulted by Claude Code; a deny here still holds. */
const PATH_TOOLS: ReadonlySet<string> = new Set(['Read', 'Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'NotebookRead', 'Grep', 'Glob', 'LS']);

function toolCovered(ruleTool: string, tool: string): boolean {
  if (ruleTool === tool || TOOL_FAMILIES.get(ruleTool)?.includes(tool)) return true;
  if (!ruleTool.startsWith('mcp__')) return false;
  // mcp__server__* (or any `*` in the name) as a pattern; a bare mcp__server is every tool of that server.
  return ruleTool.includes('*') ? piecesMatch(pieces(ruleTool), tool) : tool.startsWith(`${ruleTool}__`);
}

// ---- Bash ----

/**
 * `:*` at the end is the legacy spelling of ` *`. A trailing ` *` also matches the bare command (`ls *` matches `ls`,
 * not `lsof`): the word boundary Claude Code documents. The rule is tried on the whole command and on every command
 * in it (joined by `&&`, `||`, `;`, `|`, `&`, newlines, `$(…)`, backticks or parentheses), with quotes, wrappers
 * (`timeout 5`, `nohup`, `sudo`…), `VAR=value` prefixes and the command's directory taken off: a deny on any one of
 * them denies the whole.
 */
function bashMatches(specifier: string, commands: readonly string[] | null): boolean {
  if (commands === null) return true;
  const pattern = pieces(specifier.endsWith(':*') ? `${specifier.slice(0, -2)} *` : specifier);
  const bare = withoutTrailingWildcard(pattern);
  return commands.some((c) => piecesMatch(pattern, c) || (bare !== null && piecesMatch(bare, c)));
}

/** `ls *` → `ls`: the pattern without a trailing ` *`, or null when it has none. */
function withoutTrailingWildcard(pattern: string[]): string[] | null {
  if (pattern.length < 2 || pattern[pattern.length - 1] !== '' || !pattern[pattern.length - 2].endsWith(' ')) return null;
  return [...pattern.slice(0, -2), pattern[pattern.length - 2].slice(0, -1)];
}

const SEPARATORS = new Set([';', '|', '&', '\n', '\r', '(', ')', '`']);
const WRAPPERS = new Set(['timeout', 'time', 'nice', 'nohup', 'stdbuf', 'env', 'sudo', 'doas', 'command', 'exec', 'xargs']);
/** How far past a wrapper its own options and arguments may reach (`timeout -s KILL 10 rm …`). */
const WRAPPER_REACH = 6;
/** Past this many readings of one command (`env env env …`), it is not read: every Bash rule with a specifier denies it. */
const MAX_STARTS = 32;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** The command and every simple command in it, in their forms; null when one of them cannot all be read. */
function commandCandidates(command: string): string[] | null {
  const out = new Set<string>([command, command.trim()]);
  let part = '';
  for (const ch of `${command}\n`) {
    if (!SEPARATORS.has(ch)) {
      part += ch;
      continue;
    }
    const forms = simpleCommandForms(part);
    if (forms === null) return null;
    for (const c of forms) out.add(c);
    part = '';
  }
  return [...out];
}

/**
 * One simple command as written, and as it runs: unquoted, one space between words, without what only wraps it.
 * null when it has more readings than are worth trying (`env env env …`).
 */
function simpleCommandForms(part: string): string[] | null {
  const written = part.trim();
  if (written === '' || written === '$') return [];
  const words = written.replace(/['"\\]/g, '').split(/\s+/).filter((w) => w !== '');
  // `$(…)`'s `$` stays behind on the command before it.
  if (words[words.length - 1] === '$') words.pop();
  const forms = new Set([written]);
  // Where the command may start: after `VAR=value`s, and anywhere in reach past a wrapper (`timeout -s KILL 10 rm`).
  const starts = new Set([0]);
  for (const start of starts) {
    let at = start;
    while (at < words.length && ASSIGNMENT.test(words[at])) at++;
    if (at >= words.length) continue;
    forms.add([posix.basename(words[at]), ...words.slice(at + 1)].join(' '));
    if (!WRAPPERS.has(posix.basename(words[at]))) continue;
    for (let next = at + 1; next <= Math.min(words.length - 1, at + WRAPPER_REACH); next++) starts.add(next);
    if (starts.size > MAX_STARTS) return null;
  }
  return [...forms];
}

/** The literal text between a pattern's unescaped `*`s; `\*` is a star and `\\` a backslash. */
function pieces(pattern: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\' && (pattern[i + 1] === '*' || pattern[i + 1] === '\\')) current += pattern[++i];
    else if (ch === '*') {
      out.push(current);
      current = '';
    } else current += ch;
  }
  out.push(current);
  return out;
}

/** Whether `text` is the pieces with any text (or none) between them, walked left to right. */
function piecesMatch(p: readonly string[], text: string): boolean {
  if (p.length === 1) return text === p[0];
  const first = p[0];
  const last = p[p.length - 1];
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  const end = text.length - last.length;
  let at = first.length;
  for (const middle of p.slice(1, -1)) {
    const found = text.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

// ---- Paths ----

/** gitignore's own syntax (no braces, no extglobs, no negation); `*` matches dotfiles as gitignore's does. */
const GLOB_OPTIONS = { dot: true, nobrace: true, noext: true, nonegate: true, nocomment: true, platform: 'linux' } as const;

function pathMatches(glob: string, paths: readonly string[]): boolean {
  try {
    return paths.some((p) => minimatch(p, glob, GLOB_OPTIONS));
  } catch {
    // A pattern minimatch refuses (over 64 KiB) cannot be judged, so it denies.
    return paths.length > 0;
  }
}

/**
 * `//abs` is an absolute path, `~/x` is under the home directory, `/x` is under the project root (the session's cwd),
 * `./x` and `x` under the cwd. As in gitignore, a pattern with no `/` but a trailing one matches at any depth, and a
 * trailing `/` means everything in that directory.
 */
function pathGlob(specifier: string, scope: RuleScope): string {
  let base = scope.cwd;
  let rest = specifier;
  if (specifier.startsWith('//')) [base, rest] = ['/', specifier.slice(2)];
  else if (specifier.startsWith('~/')) [base, rest] = [scope.home, specifier.slice(2)];
  else if (specifier.startsWith('/')) rest = specifier.slice(1);
  else if (specifier.startsWith('./')) rest = specifier.slice(2);
  else if (!specifier.slice(0, -1).includes('/')) rest = `**/${specifier}`;
  if (rest.endsWith('/')) rest += '**';
  const root = escape(posix.resolve(base));
  return posix.normalize(root === '/' ? `/${rest}` : `${root}/${rest}`);
}

/** The paths a file tool names, absolute and normalised (`src/../.env` is `.env`). */
function pathsOf(input: Record<string, unknown>, scope: RuleScope): string[] {
  return ['file_path', 'notebook_path', 'path']
    .map((k) => input[k])
    .filter((p): p is string => typeof p === 'string' && p !== '')
    .map((p) => (p === '~' || p.startsWith('~/') ? posix.join(scope.home, p.slice(1)) : p))
    .map((p) => posix.resolve(scope.cwd, p));
}

function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let dir = posix.dirname(path); dir !== '/'; dir = posix.dirname(dir)) out.push(dir);
  return out;
}

// ---- Domains ----

/** The domain and its subdomains (`*.example.com`: subdomains only); a url without a scheme is read as https. */
function domainMatches(domain: string, input: Record<string, unknown>): boolean {
  const host = typeof input.url === 'string' ? hostOf(input.url) : null;
  if (host === null) return false;
  const d = domain.toLowerCase().replace(/\.$/, '');
  if (d.startsWith('*.')) return host.endsWith(d.slice(1));
  return host === d || host.endsWith(`.${d}`);
}

function hostOf(url: string): string | null {
  for (const candidate of [url, `https://${url}`]) {
    try {
      const host = new URL(candidate).hostname.toLowerCase().replace(/\.$/, '');
      if (host !== '') return host;
    } catch {
      // Not a URL this way: the next reading, if any.
    }
  }
  return null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
