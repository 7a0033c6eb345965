import { diffArrays } from 'diff';

/**
 * Line diffs for the page, on jsdiff (Myers' algorithm): a list of lines, each kept, added or removed, with its line
 * numbers, which a unified view shows as it is and a side-by-side view pairs up (sideBySide). Pure.
 */

export type DiffLine = {
  kind: 'same' | 'add' | 'del';
  text: string;
  /** 1-based line number in the text before; null for an added line. */
  oldLine: number | null;
  /** 1-based line number in the text after; null for a removed line. */
  newLine: number | null;
};

/**
 * Past this many edits between the texts' differing middles, Myers' search stops (its work grows with the square of the
 * edits: 2,000 lines rewritten whole took about 0.1 s to give up at this bound, 0.5 s at 2,000), and the middle is shown
 * as all removed, then all added: still true, just coarser. The ends the texts share stay kept.
 */
export const MAX_EDITS = 1000;

export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** `before` null (no file yet) diffs as empty: every line of `after` is added. A final newline or none makes no difference. */
export function lineDiff(before: string | null, after: string, maxEdits: number = MAX_EDITS): DiffLine[] {
  const a = splitLines(before ?? '');
  const b = splitLines(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const out: DiffLine[] = [];
  let oldLine = 0;
  let newLine = 0;
  const same = (text: string) => out.push({ kind: 'same', text, oldLine: ++oldLine, newLine: ++newLine });
  const del = (text: string) => out.push({ kind: 'del', text, oldLine: ++oldLine, newLine: null });
  const add = (text: string) => out.push({ kind: 'add', text, oldLine: null, newLine: ++newLine });
  a.slice(0, start).forEach(same);
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const changes = midA.length > 0 && midB.length > 0 ? diffArrays(midA, midB, { maxEditLength: maxEdits }) : undefined;
  if (changes) {
    for (const change of changes) change.value.forEach(change.added ? add : change.removed ? del : same);
  } else {
    midA.forEach(del);
    midB.forEach(add);
  }
  a.slice(endA).forEach(same);
  return out;
}

/** One row of a side-by-side view: the line before on the left, the line after on the right; null where a side has none. */
export type DiffRow = { left: DiffLine | null; right: DiffLine | null };

/** Pairs a diff's lines for a side-by-side view: kept lines face themselves, removed lines face the lines added in their place. */
export function sideBySide(lines: readonly DiffLine[]): DiffRow[] {
  const rows: DiffRow[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.kind === 'same') {
      rows.push({ left: line, right: line });
      i++;
      continue;
    }
    const dels: DiffLine[] = [];
    const adds: DiffLine[] = [];
    while (i < lines.length && lines[i].kind === 'del') dels.push(lines[i++]);
    while (i < lines.length && lines[i].kind === 'add') adds.push(lines[i++]);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) rows.push({ left: dels[k] ?? null, right: adds[k] ?? null });
  }
  return rows;
}
