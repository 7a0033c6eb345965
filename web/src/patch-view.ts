import { DiffLine, DiffRow, sideBySide } from './line-diff';
import type { PatchLine } from '../../src/worktrees/git-parse';

/**
 * A session's patch (GET /coding-sessions/{id}/diff) as the page shows it, pure: its hunks, each a header and the
 * lines of line-diff.ts, so the side-by-side view pairs them as the profile diffs are paired (sideBySide).
 */

export interface Hunk {
  /** `@@ -1,3 +1,4 @@`; null for lines before any header (a page that starts inside a hunk). */
  header: string | null;
  lines: DiffLine[];
}

export function hunksOf(lines: readonly PatchLine[]): Hunk[] {
  const hunks: Hunk[] = [];
  for (const l of lines) {
    if (l.kind === 'hunk') {
      hunks.push({ header: l.text, lines: [] });
      continue;
    }
    if (hunks.length === 0) hunks.push({ header: null, lines: [] });
    hunks[hunks.length - 1].lines.push({ kind: l.kind, text: l.text, oldLine: l.old_line, newLine: l.new_line });
  }
  return hunks;
}

/** The hunk's rows side by side: removed lines facing the lines added in their place. */
export function hunkRows(hunk: Hunk): DiffRow[] {
  return sideBySide(hunk.lines);
}

/** Other live sessions in the same git work tree, by alias: they can overwrite each other's changes. */
export function sharingWorkTree(
  session: { id: string; state: string; work_tree: string | null },
  all: Iterable<{ id: string; alias: string; state: string; work_tree: string | null }>,
): string[] {
  if (session.state === 'exited' || session.work_tree === null) return [];
  const others: string[] = [];
  for (const s of all) if (s.id !== session.id && s.state !== 'exited' && s.work_tree === session.work_tree) others.push(s.alias);
  return others;
}
