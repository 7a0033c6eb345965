import { load } from 'js-yaml';
import { parse as parseToml } from 'smol-toml';
import { DomainError } from '../../common/domain-error';
import { RESERVED_MCP_SERVER } from '../emitters/emitter-support';
import { McpServer, ProfileDoc, parseProfileDocument } from '../profile.schema';
import { slugify } from '../profile.slug';
import { ScanFiles, ScanWarning, ScanWarningCode } from './scan.types';

/** Helpers the scanners share. Pure. */

export type Plain = Record<string, unknown>;

export class ScanWarnings {
  readonly list: ScanWarning[] = [];
  add(code: ScanWarningCode, path: string, message: string): void {
    this.list.push({ code, path, message });
  }
}

export function isPlain(v: unknown): v is Plain {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function stringList(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
}

export function stringRecord(v: unknown): Record<string, string> | undefined {
  return isPlain(v) && Object.values(v).every((x) => typeof x === 'string') ? (v as Record<string, string>) : undefined;
}

/** A JSON object file; a malformed one is warned and read as absent rather than failing the whole scan. */
export function readJson(files: ScanFiles, path: string, warnings: ScanWarnings): Plain | undefined {
  const text = files.get(path);
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (isPlain(value)) return value;
    warnings.add('malformed', path, 'not a JSON object; ignored');
  } catch (e) {
    warnings.add('malformed', path, `not valid JSON (${(e as Error).message}); ignored`);
  }
  return undefined;
}

export function readToml(files: ScanFiles, path: string, warnings: ScanWarnings): Plain | undefined {
  const text = files.get(path);
  if (text === undefined) return undefined;
  try {
    return parseToml(text) as Plain;
  } catch (e) {
    warnings.add('malformed', path, `not valid TOML (${(e as Error).message.split('\n')[0]}); ignored`);
    return undefined;
  }
}

/**
 * Splits a Markdown file with YAML frontmatter, the inverse of the emitters' `markdown()`: that writer adds one
 * newline to a body that lacks it, so one trailing newline is removed here.
 */
export function readMarkdown(text: string, path: string, warnings: ScanWarnings): { frontmatter: Plain; body: string } {
  const m = /^---\r?\n([\s\S]*?)^---[ \t]*(?:\r?\n|$)/m.exec(text);
  if (!m || m.index !== 0) return { frontmatter: {}, body: stripOneNewline(text) };
  let frontmatter: Plain = {};
  try {
    const value: unknown = load(m[1]);
    if (isPlain(value)) frontmatter = value;
    else if (value !== undefined && value !== null) warnings.add('malformed', path, 'frontmatter is not a mapping; ignored');
  } catch (e) {
    warnings.add('malformed', path, `frontmatter is not valid YAML (${(e as Error).message.split('\n')[0]}); ignored`);
  }
  return { frontmatter, body: stripOneNewline(text.slice(m[0].length)) };
}

function stripOneNewline(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

/** "security-auditor" → "Security Auditor": a name whose slug is the id again, so an import keeps the id. */
export function nameFromId(id: string): string {
  return id
    .split('-')
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join(' ');
}

export function idFrom(text: string | undefined): string {
  return slugify(text || 'scanned-profile');
}

export function isReserved(name: string): boolean {
  return name.trim().toLowerCase() === RESERVED_MCP_SERVER;
}

/**
 * MCP servers in the shape claude-code, codex and gemini-cli share (`command`/`args`/`env` or a URL). The reserved
 * `brainstem` entry is skipped: the emitters inject it on every apply. Headers of other servers cannot be expressed
 * in a profile and are warned.
 */
export function readMcpServers(servers: unknown, path: string, warnings: ScanWarnings, urlKeys: readonly string[]): Record<string, McpServer> | undefined {
  if (servers === undefined) return undefined;
  if (!isPlain(servers)) {
    warnings.add('malformed', path, 'MCP servers are not a mapping; ignored');
    return undefined;
  }
  const out: Record<string, McpServer> = {};
  for (const [name, raw] of Object.entries(servers)) {
    if (isReserved(name)) continue;
    if (!isPlain(raw)) {
      warnings.add('malformed', path, `MCP server ${name} is not a mapping; ignored`);
      continue;
    }
    const url = urlKeys.map((k) => raw[k]).find((v): v is string => typeof v === 'string');
    if (typeof raw.command === 'string') {
      const env = stringRecord(raw.env);
      out[name] = { type: 'stdio', command: raw.command, args: stringList(raw.args) ?? [], ...(env && Object.keys(env).length ? { env } : {}) };
    } else if (url !== undefined) {
      out[name] = { type: 'http', url };
      if (raw.headers !== undefined || raw.env_http_headers !== undefined || raw.http_headers !== undefined) {
        warnings.add('lossy', path, `MCP server ${name}: headers cannot be expressed in a profile and are not kept`);
      }
    } else {
      warnings.add('not_mapped', path, `MCP server ${name} has neither a command nor a URL; ignored`);
    }
  }
  return Object.keys(out).length ? out : undefined;
}

/** The keys of `obj` outside `known`, warned once per file. */
export function warnUnknownKeys(obj: Plain, known: readonly string[], path: string, warnings: ScanWarnings, what = ''): void {
  const extra = Object.keys(obj).filter((k) => !known.includes(k));
  if (extra.length) warnings.add('not_mapped', path, `${what}${extra.join(', ')}: no profile field maps to ${extra.length > 1 ? 'these' : 'this'}; not kept`);
}

/**
 * The inverse of `instructionsMarkdown` (codex, gemini-cli): system prompt, then an optional "Also read these
 * files:" list, then an optional "## Path rules" list. A rule's continuation lines belong to its instruction.
 */
export function readInstructionsMarkdown(text: string): ProfileDoc['instructions'] {
  const out: ProfileDoc['instructions'] = {};
  let rest = text;
  const rulesAt = lastSection(rest, '## Path rules\n');
  if (rulesAt >= 0) {
    const lines = rest.slice(rulesAt + '## Path rules\n'.length).split('\n');
    const rules: Array<{ glob: string; instruction: string }> = [];
    for (const line of lines) {
      const m = /^- When working on files matching `([^`]*)`: ([\s\S]*)$/.exec(line);
      if (m) rules.push({ glob: m[1], instruction: m[2] });
      else if (rules.length) rules[rules.length - 1].instruction += `\n${line}`;
    }
    if (rules.length && /^- When/.test(lines[0] ?? '')) {
      out.rules = rules;
      rest = rest.slice(0, rulesAt).replace(/\n\n$/, '');
    }
  }
  const filesAt = lastSection(rest, 'Also read these files:\n');
  if (filesAt >= 0) {
    const lines = rest.slice(filesAt + 'Also read these files:\n'.length).split('\n');
    if (lines.every((l) => l.startsWith('- '))) {
      out.files = lines.map((l) => l.slice(2));
      rest = rest.slice(0, filesAt).replace(/\n\n$/, '');
    }
  }
  if (rest.trim()) out.system_prompt = rest;
  return out;
}

/** Where a trailing section with this heading starts: at the start of the text or after a blank line. */
function lastSection(text: string, heading: string): number {
  const i = text.lastIndexOf(`\n\n${heading}`);
  if (i >= 0) return i + 2;
  return text.startsWith(heading) ? 0 : -1;
}

/** A marked profile block (`<!-- brainstem:profile <id> begin -->`) in AGENTS.md or GEMINI.md: its id, name and instructions. */
export function readProfileBlock(text: string, path: string, warnings: ScanWarnings): { id: string; name?: string; instructions: ProfileDoc['instructions'] } | undefined {
  const blocks = [...text.matchAll(/<!-- brainstem:profile ([a-z0-9][a-z0-9-]*) begin -->\n([\s\S]*?)\n<!-- brainstem:profile \1 end -->/g)];
  if (!blocks.length) return undefined;
  if (blocks.length > 1) warnings.add('ambiguous', path, `${blocks.length} profile blocks; the first (${blocks[0][1]}) is read`);
  const [, id, body] = blocks[0];
  const heading = /^# (.*)(?:\n\n([\s\S]*))?$/.exec(body);
  if (!heading) return { id, instructions: readInstructionsMarkdown(body) };
  return { id, name: heading[1], instructions: readInstructionsMarkdown(heading[2] ?? '') };
}

/** Validates the proposal with the one profile schema (defaults applied), so a scan never proposes what create would refuse. */
export function validatedProposal(raw: Plain): ProfileDoc {
  const parsed = parseProfileDocument(raw);
  if (!parsed.ok) throw new DomainError('scan_invalid_profile', `scan: the files do not make a valid profile: ${parsed.errors.join('; ')}`, { errors: parsed.errors });
  return parsed.doc;
}
