import { closeSync, existsSync, fstatSync, openSync, readSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';

/** The most of a transcript's end that is read for its output: it holds each request claude sent, so it grows fast. */
export const TRANSCRIPT_TAIL_BYTES = 1 << 20;
/** The most of one rendered message kept: the output is a view, the transcript keeps the rest. */
const MAX_PART_CHARS = 2000;

/** Where claude keeps transcripts, in the home given: the only place an external session's output is read from. */
export const projectsDir = (home: string): string => join(home, '.claude', 'projects');

/** The path with its existing part's symlinks resolved (the rest, not created yet, kept as written). */
function resolveExisting(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(resolveExisting(parent), path.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
  }
}

/**
 * The transcript path a hook names, when it lies under ~/.claude/projects once symlinks are resolved; else null, and
 * nothing is ever read from it. Checked again at each read: a symlink may change after.
 */
export function transcriptUnder(home: string, path: string): string | null {
  if (!isAbsolute(path) || normalize(path) !== path) return null;
  const root = resolveExisting(projectsDir(home));
  const real = resolveExisting(path);
  return real.startsWith(root + sep) ? path : null;
}

/** A claude session's transcript found by its id: `<session id>.jsonl` in one of the project folders under ~/.claude/projects. */
export function findTranscript(home: string, claudeSessionId: string): string | null {
  const root = projectsDir(home);
  let projects: string[];
  try {
    projects = readdirSync(root);
  } catch {
    return null;
  }
  const found = projects.map((p) => join(root, p, `${claudeSessionId}.jsonl`)).find((f) => existsSync(f));
  return found === undefined ? null : transcriptUnder(home, found);
}

/** The last `lines` lines of an external session's transcript as text: the prompts, claude's words, its tool calls. */
export function transcriptTail(home: string, path: string | null, lines: number): string[] {
  if (path === null || transcriptUnder(home, path) === null) return [];
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, TRANSCRIPT_TAIL_BYTES);
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, size - length);
    const records = buf.toString('utf8').split('\n');
    // A read that starts mid-file starts mid-record: that one is dropped.
    if (length < size) records.shift();
    const out = records.flatMap(renderRecord);
    return lines <= 0 ? [] : out.slice(-lines);
  } finally {
    closeSync(fd);
  }
}

const clip = (text: string): string => (text.length > MAX_PART_CHARS ? `${text.slice(0, MAX_PART_CHARS)}…` : text);

/** One transcript record as output lines: user and assistant messages only (claude's own bookkeeping is skipped). */
function renderRecord(line: string): string[] {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return [];
  }
  if (typeof record !== 'object' || record === null) return [];
  const { type, message } = record as { type?: unknown; message?: { content?: unknown } };
  if ((type !== 'user' && type !== 'assistant') || typeof message !== 'object' || message === null) return [];
  const who = type === 'user' ? 'user' : 'claude';
  const content = message.content;
  const parts = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
  return parts.flatMap((p: unknown) => renderPart(who, p)).flatMap((t) => clip(t).split('\n'));
}

function renderPart(who: string, part: unknown): string[] {
  if (typeof part !== 'object' || part === null) return [];
  const p = part as { type?: unknown; text?: unknown; name?: unknown; input?: unknown; content?: unknown };
  if (p.type === 'text' && typeof p.text === 'string') return [`${who}: ${p.text}`];
  if (p.type === 'tool_use' && typeof p.name === 'string') return [`${who} uses ${p.name}: ${JSON.stringify(p.input ?? {})}`];
  if (p.type === 'tool_result') {
    const text = typeof p.content === 'string' ? p.content : Array.isArray(p.content) ? p.content.map((c: { text?: unknown }) => (typeof c?.text === 'string' ? c.text : '')).join('\n') : '';
    return [`tool result: ${text}`];
  }
  return [];
}
