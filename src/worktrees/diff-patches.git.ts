import { DiffFile } from './diff-page';
import { GitCli } from './git-cli';
import { FilePatch, parsePatch, parseRawPatches } from './git-parse';

/** A patch is read up to this many bytes: past it, the file's page says it was cut. */
const MAX_PATCH_BYTES = 8 * 1024 * 1024;

export type PageFile = DiffFile & { untracked?: boolean };

/**
 * Each file's patch as `git diff <merge base> -- <its path (and where it was renamed from)>` gives it. The tracked
 * files a page can reach are read in one `git diff --raw -p` instead, split by file, when that diff pairs them exactly
 * as they are listed (each once, a rename from the same path: asked together, a deleted and an added file could be
 * taken for a rename that each asked alone is not) and fits in MAX_PATCH_BYTES; otherwise, and for untracked files
 * and type changes (two patches for one file), each is read alone.
 */
export function patchLoader(git: GitCli, cwd: string, mergeBase: string, reachable: readonly PageFile[]): (file: PageFile) => Promise<FilePatch> {
  const batch = reachable.filter((f) => !f.untracked && f.change !== 'type_changed');
  const inBatch = new Set(batch.map((f) => f.path));
  let together: Promise<Map<string, FilePatch> | null> | null = null;
  return async (file) => {
    if (batch.length > 1 && inBatch.has(file.path)) {
      together ??= readTogether(git, cwd, mergeBase, batch);
      const patch = (await together)?.get(file.path);
      if (patch) return patch;
    }
    return patchOf(git, cwd, mergeBase, file);
  };
}

async function readTogether(git: GitCli, cwd: string, mergeBase: string, files: readonly PageFile[]): Promise<Map<string, FilePatch> | null> {
  const paths = files.flatMap((f) => (f.old_path ? [f.old_path, f.path] : [f.path]));
  const r = await git.spawn(['diff', '--no-color', '--no-ext-diff', '-M', '--raw', '-p', '-z', mergeBase, '--', ...paths], { cwd, maxBytes: MAX_PATCH_BYTES });
  if (r.code !== 0 || r.truncated) return null;
  const { pairs, patches } = parseRawPatches(r.stdout);
  if (pairs.length !== files.length || patches.length !== files.length) return null;
  const wanted = new Map(files.map((f) => [f.path, f.old_path]));
  const out = new Map<string, FilePatch>();
  for (let i = 0; i < pairs.length; i++) {
    const { path, old_path } = pairs[i];
    if (wanted.get(path) !== old_path || out.has(path)) return null;
    out.set(path, parsePatch(patches[i]));
  }
  return out;
}

async function patchOf(git: GitCli, cwd: string, mergeBase: string, file: PageFile): Promise<FilePatch> {
  const args = file.untracked
    ? ['diff', '--no-index', '--no-color', '--no-ext-diff', '--', '/dev/null', file.path]
    : ['diff', '--no-color', '--no-ext-diff', '-M', mergeBase, '--', ...(file.old_path ? [file.old_path] : []), file.path];
  const r = await git.run(args, { cwd, ok: [1], maxBytes: MAX_PATCH_BYTES });
  const patch = parsePatch(r.stdout);
  if (!r.truncated) return patch;
  return { ...patch, lines: [...patch.lines.slice(0, -1), { kind: 'hunk', text: `[patch cut: it is over ${MAX_PATCH_BYTES / 1024 / 1024} MiB]`, old_line: null, new_line: null }] };
}
