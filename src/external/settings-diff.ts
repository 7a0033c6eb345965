import { structuredPatch } from 'diff';

/** Lines of context kept around each change in a preview. */
const CONTEXT = 3;

/**
 * A unified diff of a settings file before and after a change (null: no file), for the preview shown before anything
 * is written: `--- path` / `+++ path` headers, then each hunk (`@@ -a,b +c,d @@`) with three lines of context, as
 * jsdiff (Myers) finds them. Empty when nothing changes.
 */
export function unifiedDiff(path: string, before: string | null, after: string | null): string {
  if (before === after) return '';
  const { hunks } = structuredPatch(path, path, before ?? '', after ?? '', '', '', { context: CONTEXT });
  const out = [`--- ${before === null ? '/dev/null' : path}`, `+++ ${after === null ? '/dev/null' : path}`];
  // An empty side starts at the line before it, as diff -u writes it (`-0,0`).
  const range = (start: number, lines: number) => `${lines === 0 ? start - 1 : start},${lines}`;
  for (const h of hunks) out.push(`@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`, ...h.lines);
  return out.join('\n') + '\n';
}
