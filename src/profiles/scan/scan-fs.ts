import { readFile, readdir, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { DomainError } from '../../common/domain-error';
import { ScanWarning } from './scan.types';

/** The runtime files a scan reads: fixed paths, and `*` for one directory level of names. */
export const SCAN_PATTERNS = [
  '.claude/settings.json',
  '.claude/agents/*.md',
  '.claude/rules/*.md',
  '.claude/skills/*/SKILL.md',
  '.mcp.json',
  'CLAUDE.md',
  'AGENTS.md',
  '.codex/config.toml',
  'opencode.json',
  '.opencode/agent/*.md',
  '.gemini/settings.json',
  'GEMINI.md',
] as const;

/** Runtime config files are small; anything bigger is not one of ours and is not read into memory. */
const MAX_FILE_BYTES = 1024 * 1024;

/** Reads a project's runtime files for the pure scanners. The one place scan touches the filesystem. */
export async function readScanFiles(dir: string): Promise<{ files: Map<string, string>; warnings: ScanWarning[] }> {
  if (!isAbsolute(dir)) throw new DomainError('invalid_input', `dir: must be an absolute path (got ${dir})`);
  const info = await stat(dir).catch(() => null);
  if (!info) throw new DomainError('dir_unusable', `dir: ${dir} does not exist`);
  if (!info.isDirectory()) throw new DomainError('dir_unusable', `dir: ${dir} is not a directory`);
  const files = new Map<string, string>();
  const warnings: ScanWarning[] = [];
  for (const pattern of SCAN_PATTERNS) {
    for (const path of await expand(dir, pattern.split('/'))) {
      const full = join(dir, path);
      const s = await stat(full).catch(() => null);
      if (!s?.isFile()) continue;
      if (s.size > MAX_FILE_BYTES) {
        warnings.push({ code: 'not_mapped', path, message: `larger than ${MAX_FILE_BYTES} bytes; not read` });
        continue;
      }
      files.set(path, await readFile(full, 'utf8'));
    }
  }
  return { files, warnings };
}

/** The relative paths matching a pattern's segments (`*` matches any one name; `*.md` any name with that suffix). */
async function expand(dir: string, segments: string[], prefix = ''): Promise<string[]> {
  const [head, ...rest] = segments;
  if (head === undefined) return [prefix];
  const names = head.includes('*') ? (await readdir(join(dir, prefix)).catch(() => [] as string[])).filter((n) => n.endsWith(head.slice(head.indexOf('*') + 1))).sort() : [head];
  const out: string[] = [];
  for (const name of names) out.push(...(await expand(dir, rest, prefix ? `${prefix}/${name}` : name)));
  return out;
}
