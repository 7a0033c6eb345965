/** The text of a tail from its lines as the service reads them (the file's last newline dropped). */
export const tailText = (lines: readonly string[]): string => (lines.length === 0 ? '' : `${lines.join('\n')}\n`);

/** A tail with a chunk of output added, kept to its last `max` lines (a partial last line counts as one). */
export function appendOutput(text: string, chunk: string, max: number): string {
  const next = text + chunk;
  const lines = next.split('\n');
  const complete = next.endsWith('\n') ? lines.length - 1 : lines.length;
  return complete <= max ? next : lines.slice(complete - max).join('\n');
}
