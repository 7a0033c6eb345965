import { ChangedFile, CommitInfo, FilePatch, PatchLine } from './git-parse';

/**
 * A session's diff as the API gives it, bounded and paged, pure: every changed file (up to MAX_FILES) with its counts,
 * and the patches of a page of them, at most `limit` lines, a file cut mid-way going on in the next page. A binary file
 * is named, never dumped. Lines longer than MAX_LINE_CHARS are cut (and marked so).
 */

export const DEFAULT_DIFF_LINES = 1000;
export const MAX_DIFF_LINES = 5000;
export const MAX_LINE_CHARS = 1000;
/** Files listed at most; more are counted in files_total. */
export const MAX_FILES = 1000;
/** Commits listed at most; more are counted in commits_total. */
export const MAX_COMMITS = 100;

export interface DiffFile extends ChangedFile {
  /** Changed in the worktree and not committed yet (the worker is still at it, or left it so). */
  uncommitted: boolean;
}

export type DiffLine = PatchLine & { cut?: true };

export interface PatchPage {
  path: string;
  binary: boolean;
  /** The 0-based index of this page's first line in the file's whole patch. */
  from_line: number;
  lines: DiffLine[];
  /** Whether the file's patch ends in this page. */
  complete: boolean;
}

export interface WorktreeDiff {
  branch: string;
  base_ref: string;
  base_branch: string | null;
  /** What the diff is taken from: where the branch left its base (their merge base), or base_sha when the base is gone. */
  merge_base: string;
  head: string;
  ahead: number;
  behind: number;
  commits: CommitInfo[];
  commits_total: number;
  files: DiffFile[];
  files_total: number;
  patches: PatchPage[];
  next_cursor: string | null;
}

export interface DiffCursor {
  file: number;
  line: number;
}

const CURSOR = /^(\d{1,6})\.(\d{1,7})$/;

export function encodeCursor(c: DiffCursor): string {
  return `${c.file}.${c.line}`;
}

export function decodeCursor(text: string): DiffCursor | null {
  const m = CURSOR.exec(text);
  return m ? { file: Number(m[1]), line: Number(m[2]) } : null;
}

function clip(line: PatchLine): DiffLine {
  return line.text.length <= MAX_LINE_CHARS ? line : { ...line, text: line.text.slice(0, MAX_LINE_CHARS), cut: true };
}

/** One file's part of a page: from `fromLine`, at most `budget` lines (a binary file takes one, for its name). */
export function patchSlice(path: string, patch: FilePatch, fromLine: number, budget: number): { page: PatchPage; used: number } {
  if (patch.binary) return { page: { path, binary: true, from_line: 0, lines: [], complete: true }, used: 1 };
  const lines = patch.lines.slice(fromLine, fromLine + budget).map(clip);
  return { page: { path, binary: false, from_line: fromLine, lines, complete: fromLine + lines.length >= patch.lines.length }, used: Math.max(1, lines.length) };
}

/**
 * How far ahead of the file being paged its followers' patches are loaded: at most `concurrency` loads at once, and a
 * file only while the files before it cannot fill the page, by `minLines` (the lines a file's part takes at least, say
 * from its counts: a lower bound, else a needed file would wait to be loaded in turn, and a too high one loads files
 * the page never shows).
 */
export interface PageLookahead {
  concurrency: number;
  minLines: (path: string) => number;
}

const ONE_AT_A_TIME: PageLookahead = { concurrency: 1, minLines: () => 1 };

/**
 * The files from the cursor's on that a page of `limit` lines can reach, by the lines each takes at least: each one
 * while the ones before it leave room.
 */
export function reachable(paths: readonly string[], cursor: DiffCursor, limit: number, minLines: (path: string) => number): string[] {
  const out: string[] = [];
  let promised = 0;
  for (let file = cursor.file; file < paths.length && promised < limit; file++) {
    out.push(paths[file]);
    promised += Math.max(1, minLines(paths[file]) - (file === cursor.file ? cursor.line : 0));
  }
  return out;
}

/**
 * The patches of one page: files from the cursor's on, in order, until `limit` lines are taken (loaded one at a time,
 * or with a lookahead, the next ones while this one is); the cursor of the next page, or null after the last file.
 */
export async function collectPage(
  paths: readonly string[],
  cursor: DiffCursor,
  limit: number,
  load: (path: string) => Promise<FilePatch>,
  lookahead: PageLookahead = ONE_AT_A_TIME,
): Promise<{ patches: PatchPage[]; next_cursor: string | null }> {
  const loads = new Map<number, Promise<FilePatch>>();
  const ahead = cursor.file + reachable(paths, cursor, limit, lookahead.minLines).length;
  let next = cursor.file;
  const loaded = (file: number): Promise<FilePatch> => {
    for (; next === file || (next < ahead && next - file < lookahead.concurrency); next++) {
      const p = load(paths[next]);
      // A file loaded ahead that fails is reported when (if) the page reaches it.
      p.catch(() => undefined);
      loads.set(next, p);
    }
    const p = loads.get(file) as Promise<FilePatch>;
    loads.delete(file);
    return p;
  };
  const patches: PatchPage[] = [];
  let budget = limit;
  let line = cursor.line;
  for (let file = cursor.file; file < paths.length; file++, line = 0) {
    if (budget <= 0) return { patches, next_cursor: encodeCursor({ file, line: 0 }) };
    const { page, used } = patchSlice(paths[file], await loaded(file), line, budget);
    patches.push(page);
    budget -= used;
    if (!page.complete) return { patches, next_cursor: encodeCursor({ file, line: line + page.lines.length }) };
  }
  return { patches, next_cursor: null };
}
