/** Terminal escape sequences: CSI (colours, cursor moves), OSC (titles, hyperlinks, clipboard) and the two-byte ones. */
// eslint-disable-next-line no-control-regex
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?/g;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Text from the service (a worker's output, a title, a question) made safe to print on a terminal: escape sequences
 * and control characters other than newline and tab are dropped, so no worker can move the cursor, retitle the
 * window or write to the clipboard of the person reading.
 */
export function printable(text: string): string {
  return text.replace(ESCAPES, '').replace(CONTROLS, '');
}

/** One printable line, at most `max` characters: runs of whitespace become a space, the rest is cut with an ellipsis. */
export function oneLine(text: string, max = 80): string {
  const flat = printable(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Left-aligned printable columns, two spaces apart; the last column is not padded. */
export function columns(rows: readonly (readonly string[])[]): string[] {
  const cells = rows.map((r) => r.map((cell) => printable(cell).replace(/[\n\t]/g, ' ')));
  const widths = cells[0]?.map((_, i) => Math.max(...cells.map((r) => r[i].length))) ?? [];
  return cells.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ').trimEnd());
}
