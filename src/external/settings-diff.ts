/** Lines of context kept around each change in a preview. */
const CONTEXT = 3;
/** Past this many cells the middle is shown as all removed, then all added (still true, just coarser). */
const MAX_CELLS = 4_000_000;

const linesOf = (text: string | null): string[] => {
  if (text === null || text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
};

/** The middle's edit script by a longest common subsequence: each line kept (' '), removed ('-') or added ('+'). */
function middle(a: readonly string[], b: readonly string[]): string[] {
  if (a.length * b.length > MAX_CELLS) return [...a.map((l) => `-${l}`), ...b.map((l) => `+${l}`)];
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(` ${a[i++]}`);
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1][j] >= lcs[i][j + 1])) out.push(`-${a[i++]}`);
    else out.push(`+${b[j++]}`);
  }
  return out;
}

/**
 * A unified diff of a settings file before and after a change (null: no file), for the preview shown before anything
 * is written: `--- path` / `+++ path` headers, then the changed lines with three lines of context, `@@` between hunks.
 * Empty when nothing changes.
 */
export function unifiedDiff(path: string, before: string | null, after: string | null): string {
  if (before === after) return '';
  const a = linesOf(before);
  const b = linesOf(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const script = [...a.slice(0, start).map((l) => ` ${l}`), ...middle(a.slice(start, endA), b.slice(start, endB)), ...a.slice(endA).map((l) => ` ${l}`)];
  const shown = script.map((line, k) => script.slice(Math.max(0, k - CONTEXT), k + CONTEXT + 1).some((l) => l[0] !== ' '));
  const out = [`--- ${before === null ? '/dev/null' : path}`, `+++ ${after === null ? '/dev/null' : path}`];
  script.forEach((line, k) => {
    if (!shown[k]) return;
    if (k === 0 || !shown[k - 1]) out.push('@@');
    out.push(line);
  });
  return out.join('\n') + '\n';
}
