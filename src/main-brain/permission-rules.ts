/**
 * Claude Code-style permission rules: `Bash`, `Bash(npm run test *)`, `Edit(src/**)`, `WebFetch(domain:x.com)`,
 * `mcp__server` (every tool of a server) or `mcp__server__tool`. Used to refuse what a profile denies.
 */
export interface ToolUse {
  tool: string;
  input: unknown;
}

const RULE = /^([A-Za-z0-9_*-]+)(?:\((.*)\))?$/s;

function globToRegExp(glob: string): RegExp {
  const re = glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*\*/g, '\u0000').replace(/\*/g, '[^/]*').replace(/\u0000/g, '.*');
  return new RegExp(`^${re}$`, 's');
}

/** The text a rule's specifier is matched against: the command, path or URL in the tool's input. */
function subjectOf(input: unknown): string[] {
  if (!input || typeof input !== 'object') return [];
  const i = input as Record<string, unknown>;
  const out: string[] = [];
  for (const k of ['command', 'file_path', 'path', 'notebook_path', 'pattern', 'url', 'query']) if (typeof i[k] === 'string') out.push(i[k] as string);
  if (typeof i.url === 'string') {
    try {
      out.push(`domain:${new URL(i.url).hostname}`);
    } catch {
      // Not a URL: matched as text only.
    }
  }
  return out;
}

export function ruleMatches(rule: string, use: ToolUse): boolean {
  const m = RULE.exec(rule.trim());
  if (!m) return false;
  const [, name, specifier] = m;
  const toolMatches = name === use.tool || name === '*' || (name.startsWith('mcp__') && !name.slice(5).includes('__') && use.tool.startsWith(`${name}__`));
  if (!toolMatches) return false;
  if (specifier === undefined || specifier === '*' || specifier === '') return true;
  const re = globToRegExp(specifier);
  return subjectOf(use.input).some((s) => re.test(s) || (specifier.endsWith(':*') && s.startsWith(specifier.slice(0, -2))));
}

/** The first deny rule that matches the tool use, if any. */
export function deniedBy(rules: readonly string[], use: ToolUse): string | null {
  return rules.find((r) => ruleMatches(r, use)) ?? null;
}
