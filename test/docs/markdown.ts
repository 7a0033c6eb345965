import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * What the docs specs read of a Markdown file: its headings' anchors, its relative links and its prose lines.
 * Fenced code blocks and inline code hold neither links nor headings; everything else is read as GitHub renders it.
 */

export const REPO_ROOT = resolve(__dirname, '../..');

/** The Markdown files the link spec checks: the README, everything under docs/, and the bench notes the README links to. */
export function docFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : name.endsWith('.md') ? [path] : [];
    });
  return [resolve(REPO_ROOT, 'README.md'), resolve(REPO_ROOT, 'bench/README.md'), ...walk(resolve(REPO_ROOT, 'docs'))];
}

export interface MarkdownLine {
  /** 1-based line number. */
  line: number;
  text: string;
  inFence: boolean;
}

/** Each line, and whether it sits in a fenced code block (its fence lines included). */
export function markdownLines(text: string): MarkdownLine[] {
  let fence: { char: string; length: number } | null = null;
  return text.split('\n').map((raw, i) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(raw);
    if (fence === null && marker) {
      fence = { char: marker[1][0], length: marker[1].length };
      return { line: i + 1, text: raw, inFence: true };
    }
    if (fence !== null) {
      const closing = new RegExp(`^ {0,3}\\${fence.char}{${fence.length},}\\s*$`).test(raw);
      if (closing) fence = null;
      return { line: i + 1, text: raw, inFence: true };
    }
    return { line: i + 1, text: raw, inFence: false };
  });
}

/** The line with its inline code spans removed (a backtick run closes only on a run of the same length). */
export function withoutCode(line: string): string {
  return line.replace(/(`+)[\s\S]*?\1(?!`)/g, '');
}

/** The text GitHub renders for a heading's Markdown: code kept without its backticks, links as their text, no emphasis or tags. */
function headingText(markdown: string): string {
  return markdown
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/\*/g, '')
    .replace(/\\(.)/g, '$1');
}

/**
 * GitHub's heading anchor (github-slugger): lowercase, every character that is not a letter, mark, digit, `_`, `-`
 * or a space removed, each space turned into `-`.
 */
export function slug(heading: string): string {
  return headingText(heading)
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a file offers: its headings' slugs, the repeated ones suffixed -1, -2, …, and explicit `id`/`name` attributes. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const add = (heading: string) => {
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  };
  const lines = markdownLines(text);
  lines.forEach((l, i) => {
    if (l.inFence) return;
    const atx = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(l.text);
    if (atx) add(atx[1]);
    const next = lines[i + 1];
    if (next && !next.inFence && /^ {0,3}(=+|-+)\s*$/.test(next.text) && l.text.trim() !== '' && !/^\s*([|>*+-]|\d+\.)/.test(l.text)) {
      add(l.text);
    }
    for (const m of l.text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  });
  return anchors;
}

export interface Link {
  file: string;
  line: number;
  target: string;
}

/** The links of a file that stay in the repository: inline links and images, reference definitions, HTML hrefs. */
export function relativeLinks(file: string, text: string): Link[] {
  const links: Link[] = [];
  for (const l of markdownLines(text)) {
    if (l.inFence) continue;
    const prose = withoutCode(l.text);
    const targets = [
      ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]),
      ...[...prose.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)].map((m) => m[1]),
      ...[...prose.matchAll(/\bhref="([^"]+)"/g)].map((m) => m[1]),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      links.push({ file, line: l.line, target });
    }
  }
  return links;
}

/** Why a link does not resolve, or null when it does: a missing file, or an anchor the target does not offer. */
export function brokenBecause(link: Link, read: (path: string) => string = (p) => readFileSync(p, 'utf8')): string | null {
  const hash = link.target.indexOf('#');
  const pathPart = decodeURIComponent(hash < 0 ? link.target : link.target.slice(0, hash));
  const anchor = hash < 0 ? null : decodeURIComponent(link.target.slice(hash + 1));
  const target = pathPart === '' ? link.file : resolve(dirname(link.file), pathPart);
  if (!target.startsWith(REPO_ROOT)) return `${pathPart} leaves the repository`;
  if (!existsSync(target)) return `${relative(REPO_ROOT, target)} does not exist`;
  if (anchor === null) return null;
  if (!target.endsWith('.md')) return `#${anchor}: anchors are checked in Markdown files only`;
  return anchorsOf(read(target)).has(anchor) ? null : `${relative(REPO_ROOT, target)} has no heading with the anchor #${anchor}`;
}
