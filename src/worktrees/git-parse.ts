/**
 * git's machine-readable outputs read into plain data, pure. Every reader takes the `-z` form where git has one, so a
 * path with a newline, a quote or a tab is read as it is.
 */

const fields = (z: string): string[] => {
  const parts = z.split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
};

export interface WorktreeEntry {
  path: string;
  head: string | null;
  /** The branch checked out (`main`, not `refs/heads/main`); null when detached or bare. */
  branch: string | null;
  bare: boolean;
  /** git says its folder is gone (`git worktree prune` would drop it). */
  prunable: boolean;
}

/** `git worktree list --porcelain -z`: the main worktree first. */
export function parseWorktreeList(z: string): WorktreeEntry[] {
  const out: WorktreeEntry[] = [];
  let current: WorktreeEntry | null = null;
  for (const field of z.split('\0')) {
    if (field === '') {
      if (current) out.push(current);
      current = null;
      continue;
    }
    const space = field.indexOf(' ');
    const key = space < 0 ? field : field.slice(0, space);
    const value = space < 0 ? '' : field.slice(space + 1);
    if (key === 'worktree') current = { path: value, head: null, branch: null, bare: false, prunable: false };
    else if (!current) continue;
    else if (key === 'HEAD') current.head = value;
    else if (key === 'branch') current.branch = value.startsWith('refs/heads/') ? value.slice('refs/heads/'.length) : value;
    else if (key === 'bare') current.bare = true;
    else if (key === 'prunable') current.prunable = true;
  }
  if (current) out.push(current);
  return out;
}

/** One path `git status` names: its index and work-tree letters (`??` untracked), and where a rename came from. */
export interface StatusEntry {
  path: string;
  from: string | null;
  index: string;
  worktree: string;
}

/** `git status --porcelain=v1 -z`: a rename or copy is followed by the path it came from. */
export function parseStatus(z: string): StatusEntry[] {
  const parts = fields(z);
  const out: StatusEntry[] = [];
  for (let i = 0; i < parts.length; i++) {
    const entry = parts[i];
    const index = entry[0];
    const worktree = entry[1];
    const path = entry.slice(3);
    const from = index === 'R' || index === 'C' ? (parts[++i] ?? null) : null;
    out.push({ path, from, index, worktree });
  }
  return out;
}

export type FileChange = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type_changed';

export interface ChangedFile {
  path: string;
  /** Where a renamed or copied file came from. */
  old_path: string | null;
  change: FileChange;
  /** Lines added and removed; null for a binary file (git counts no lines in it). */
  additions: number | null;
  deletions: number | null;
  binary: boolean;
}

const CHANGE: Record<string, FileChange> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'type_changed' };

/**
 * `git diff --raw --numstat -z -M`: every file's raw record (`:<modes> <shas> <status>`, then its path, or for a rename
 * or copy the old path and the new), then every file's counts (`<added>\t<deleted>\t<path>`, or for a rename
 * `<added>\t<deleted>\t` then the old path and the new; a binary file's counts are `-`), joined by path.
 */
export function parseDiffRawNumstat(z: string): ChangedFile[] {
  const counts = new Map<string, { additions: number | null; deletions: number | null }>();
  const raw: Array<{ letter: string; old_path: string | null; path: string }> = [];
  const parts = fields(z);
  for (let i = 0; i < parts.length; i++) {
    const field = parts[i];
    if (field.startsWith(':')) {
      const letter = field[field.lastIndexOf(' ') + 1];
      const renamed = letter === 'R' || letter === 'C';
      const old_path = renamed ? parts[++i] : null;
      raw.push({ letter, old_path, path: parts[++i] });
      continue;
    }
    const tab1 = field.indexOf('\t');
    const tab2 = field.indexOf('\t', tab1 + 1);
    const [added, deleted, path] = [field.slice(0, tab1), field.slice(tab1 + 1, tab2), field.slice(tab2 + 1)];
    const target = path === '' ? parts[(i += 2)] : path;
    counts.set(target, { additions: added === '-' ? null : Number(added), deletions: deleted === '-' ? null : Number(deleted) });
  }
  const out = raw.map(({ letter, old_path, path }): ChangedFile => {
    const c = counts.get(path) ?? { additions: null, deletions: null };
    return { path, old_path, change: CHANGE[letter] ?? 'modified', additions: c.additions, deletions: c.deletions, binary: c.additions === null };
  });
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** One line of a patch: a hunk's header, or a line kept, added or removed, with its numbers before and after. */
export interface PatchLine {
  kind: 'hunk' | 'same' | 'add' | 'del';
  text: string;
  old_line: number | null;
  new_line: number | null;
}

export interface FilePatch {
  binary: boolean;
  lines: PatchLine[];
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/** One file's `git diff` (or `git diff --no-index`) output: its hunks' lines, numbered; `\ No newline` notes dropped. */
export function parsePatch(text: string): FilePatch {
  const lines: PatchLine[] = [];
  let inHunks = false;
  let oldLine = 0;
  let newLine = 0;
  const raw = text.split('\n');
  if (raw[raw.length - 1] === '') raw.pop();
  for (const line of raw) {
    const hunk = HUNK.exec(line);
    if (hunk) {
      inHunks = true;
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      lines.push({ kind: 'hunk', text: line, old_line: null, new_line: null });
      continue;
    }
    if (!inHunks) {
      if (line.startsWith('Binary files ') || line === 'GIT binary patch') return { binary: true, lines: [] };
      continue;
    }
    const mark = line[0];
    const body = line.slice(1);
    if (mark === ' ') lines.push({ kind: 'same', text: body, old_line: oldLine++, new_line: newLine++ });
    else if (mark === '+') lines.push({ kind: 'add', text: body, old_line: null, new_line: newLine++ });
    else if (mark === '-') lines.push({ kind: 'del', text: body, old_line: oldLine++, new_line: null });
    else if (line.startsWith('diff --git ')) inHunks = false;
  }
  return { binary: false, lines };
}

/** One file pair of a diff: where it is, and where it came from when renamed or copied. */
export interface DiffPair {
  path: string;
  old_path: string | null;
}

/**
 * `git diff --raw -p -z`: the raw records (as parseDiffRawNumstat reads them), an empty field, then the patches, each
 * from its `diff --git` line on, in the records' order. Only a patch's headers can start a line with `diff --git `
 * (every line of a hunk starts with its mark), so the text splits there exactly; a type change, shown as two patches,
 * gives more patches than records, which a caller must take as "cannot split".
 */
export function parseRawPatches(z: string): { pairs: DiffPair[]; patches: string[] } {
  const pairs: DiffPair[] = [];
  let at = 0;
  const field = (): string => {
    const end = z.indexOf('\0', at);
    const f = end < 0 ? z.slice(at) : z.slice(at, end);
    at = end < 0 ? z.length : end + 1;
    return f;
  };
  while (at < z.length && z[at] === ':') {
    const record = field();
    const letter = record[record.lastIndexOf(' ') + 1];
    const old_path = letter === 'R' || letter === 'C' ? field() : null;
    pairs.push({ path: field(), old_path });
  }
  if (at < z.length && z[at] === '\0') at++;
  const patches: string[] = [];
  let start = -1;
  for (let line = at; line < z.length; ) {
    if (z.startsWith('diff --git ', line)) {
      if (start >= 0) patches.push(z.slice(start, line));
      start = line;
    }
    const end = z.indexOf('\n', line);
    line = end < 0 ? z.length : end + 1;
  }
  if (start >= 0) patches.push(z.slice(start));
  return { pairs, patches };
}

export type ConflictKind = 'content' | 'add_add' | 'modify_delete' | 'rename' | 'binary' | 'submodule' | 'other';

export interface MergeConflict {
  path: string;
  kind: ConflictKind;
}

export type MergeTreeResult = { clean: true; tree: string } | { clean: false; tree: string; conflicts: MergeConflict[] };

/** The conflict types git's merge-tree messages name, as kinds. */
export function conflictKind(type: string): ConflictKind {
  if (/\(contents?\)/.test(type)) return 'content';
  if (/add\/add/.test(type)) return 'add_add';
  if (/modify\/delete/.test(type)) return 'modify_delete';
  if (/rename/.test(type)) return 'rename';
  if (/binary/.test(type)) return 'binary';
  if (/submodule/.test(type)) return 'submodule';
  return 'other';
}

/**
 * `git merge-tree --write-tree -z --name-only` (exit 0: clean, 1: conflicts): the tree, then the conflicted paths, an
 * empty field, and messages (`<count>, <paths>…, <type>, <text>`). Each conflicted path is classified by the first
 * CONFLICT message naming it.
 */
export function parseMergeTree(z: string, exitCode: number): MergeTreeResult {
  const parts = z.split('\0');
  const tree = parts[0];
  if (exitCode === 0) return { clean: true, tree };
  let i = 1;
  const paths: string[] = [];
  while (i < parts.length && parts[i] !== '') paths.push(parts[i++]);
  i++;
  const kinds = new Map<string, ConflictKind>();
  while (i < parts.length && /^\d+$/.test(parts[i])) {
    const n = Number(parts[i++]);
    const named = parts.slice(i, i + n);
    i += n;
    const type = parts[i++] ?? '';
    i++;
    if (!type.startsWith('CONFLICT')) continue;
    for (const p of named) if (!kinds.has(p)) kinds.set(p, conflictKind(type));
  }
  const unique = [...new Set(paths)];
  return { clean: false, tree, conflicts: unique.map((path) => ({ path, kind: kinds.get(path) ?? 'other' })) };
}

export interface CommitInfo {
  sha: string;
  subject: string;
  author: string;
  at: string;
}

/** The separators of LOG_FORMAT: unit (0x1f) between fields, record (0x1e) after each commit. */
export const LOG_FORMAT = '--format=%H%x1f%s%x1f%an%x1f%aI%x1e';

export function parseLog(text: string): CommitInfo[] {
  return text
    .split('\x1e')
    .map((r) => r.replace(/^\n/, ''))
    .filter((r) => r !== '')
    .map((r) => {
      const [sha, subject, author, at] = r.split('\x1f');
      return { sha, subject, author, at };
    });
}

/** `git rev-list --left-right --count base...head`: commits only the base has, then only the head. */
export function parseLeftRight(text: string): { behind: number; ahead: number } {
  const [behind, ahead] = text.trim().split(/\s+/).map(Number);
  return { behind: behind || 0, ahead: ahead || 0 };
}
