import { createHash } from 'node:crypto';
import { Stats, chmodSync, lstatSync, mkdirSync, readFileSync, renameSync, rmdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize } from 'node:path';
import { DomainError } from '../common/domain-error';
import { SerialQueue } from '../common/serial-queue';
import { BrainstemHooks, withBrainstemHooks, withoutBrainstemHooks } from './claude-settings';
import { unifiedDiff } from './settings-diff';

/** `user`: ~/.claude/settings.json, every claude of the user; `project`: <project>/.claude/settings.local.json, that project's. */
export type HookScope = 'user' | 'project';

export interface HooksRequest {
  scope: HookScope;
  /** The project's folder (absolute), for scope `project`. */
  project_dir?: string;
  /** Only the preview: nothing is written. */
  dry_run?: boolean;
}

/** What an install or an uninstall did, or (a dry run) would do. */
export interface HooksChange {
  scope: HookScope;
  path: string;
  /** Whether the file was written (false: a dry run, or nothing to change). */
  written: boolean;
  /** The preview: a unified diff of the file before and after (empty: no change). */
  diff: string;
  /** Where the file as it was is copied before it is written; null when nothing was copied. */
  backup_path: string | null;
  /** An uninstall: the original bytes put back, only Brainstem's hooks taken out (the file changed since), or nothing to undo. */
  restored?: 'original' | 'hooks_removed' | 'nothing';
}

/** A settings file Brainstem installed its hooks into, as the manifest keeps it. */
export interface Installation {
  scope: HookScope;
  path: string;
  /** The file's bytes before the first install (base64), null when there was no file; and its mode. */
  original: string | null;
  original_mode: number | null;
  /** Whether the install created the file's folder (.claude). */
  created_dir: boolean;
  /** What Brainstem wrote last: while the file still has these bytes, an uninstall puts the original back byte for byte. */
  written_sha256: string;
  hooks: BrainstemHooks;
  installed_at: string;
}

interface Manifest {
  installs: Record<string, Installation>;
}

const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const BACKUP_SUFFIX = '.brainstem-backup';

function readOrNull(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** Written beside and renamed over, so claude never reads half a file. */
function writeAtomic(path: string, data: Buffer | string, mode: number): void {
  const temp = `${path}.${process.pid}.brainstem-tmp`;
  writeFileSync(temp, data, { mode });
  chmodSync(temp, mode);
  renameSync(temp, path);
}

/** What the listing tells of an installation: where, since when (not the bytes it keeps). */
export type InstalledHooks = Omit<Installation, 'original' | 'original_mode' | 'hooks' | 'written_sha256'>;

/**
 * Brainstem's hooks in Claude Code's settings files, installed and taken out again (docs/guide/external-sessions.md):
 * merged beside the user's own hooks, which are never changed; the file as it was copied to `<file>.brainstem-backup`
 * first; and its original bytes kept in the manifest (`<journal dir>/claude-hooks.json`, mode 0600), so an uninstall
 * of a file left as Brainstem wrote it puts back exactly what was there, byte for byte. One operation at a time.
 * Local files only: the service uses it (ClaudeHooksInstaller), and `brainstem hooks uninstall|status` with the
 * service down, on the same files by the same rules.
 */
export class ClaudeHooksFiles {
  private readonly queue = new SerialQueue();

  constructor(
    private readonly home: string,
    readonly manifestPath: string,
  ) {}

  /** The settings files Brainstem's hooks are in now. */
  list(): InstalledHooks[] {
    return Object.values(this.load().installs).map(({ scope, path, created_dir, installed_at }) => ({ scope, path, created_dir, installed_at }));
  }

  install(req: HooksRequest, hooks: BrainstemHooks): Promise<HooksChange> {
    return this.queue.run(async () => {
      const path = this.settingsPath(req);
      const before = readOrNull(path);
      const beforeText = before?.toString('utf8') ?? null;
      const manifest = this.load();
      const prev = manifest.installs[path];
      const after = withBrainstemHooks(path, beforeText, hooks, prev?.hooks ?? null);
      const change: HooksChange = { scope: req.scope, path, written: false, diff: unifiedDiff(path, beforeText, after), backup_path: null };
      if (req.dry_run || after === beforeText) return change;
      // Changed (or removed) since Brainstem wrote it: what an uninstall puts back is then the file as the user left it,
      // less Brainstem's hooks; otherwise the bytes from before the first install stay the original.
      const editedSince = prev !== undefined && (before === null || sha256(before) !== prev.written_sha256);
      const fresh = prev === undefined || editedSince;
      const original = editedSince && before !== null ? Buffer.from(withoutBrainstemHooks(path, beforeText, prev.hooks) ?? beforeText ?? '', 'utf8') : before;
      const backup = before !== null && fresh ? this.backup(path, before) : null;
      const dir = dirname(path);
      const createdDir = lstatOrNull(dir) === null;
      mkdirSync(dir, { recursive: true });
      const mode = before !== null ? statSync(path).mode & 0o777 : 0o644;
      writeAtomic(path, after, mode);
      manifest.installs[path] = {
        scope: req.scope,
        path,
        original: fresh ? (original?.toString('base64') ?? null) : prev.original,
        original_mode: fresh ? (before !== null ? mode : null) : prev.original_mode,
        created_dir: prev?.created_dir ?? createdDir,
        written_sha256: sha256(after),
        hooks,
        installed_at: new Date().toISOString(),
      };
      this.save(manifest);
      return { ...change, written: true, backup_path: backup };
    });
  }

  uninstall(req: HooksRequest): Promise<HooksChange> {
    return this.queue.run(async () => {
      const path = this.settingsPath(req);
      const manifest = this.load();
      const prev = manifest.installs[path];
      const nothing: HooksChange = { scope: req.scope, path, written: false, diff: '', backup_path: null, restored: 'nothing' };
      if (prev === undefined) return nothing;
      const before = readOrNull(path);
      const beforeText = before?.toString('utf8') ?? null;
      const untouched = before !== null && sha256(before) === prev.written_sha256;
      const original = prev.original === null ? null : Buffer.from(prev.original, 'base64');
      const afterText = untouched ? (original?.toString('utf8') ?? null) : withoutBrainstemHooks(path, beforeText, prev.hooks);
      const restored = untouched ? 'original' : afterText === null ? 'nothing' : 'hooks_removed';
      const change: HooksChange = { ...nothing, diff: restored === 'nothing' ? '' : unifiedDiff(path, beforeText, afterText), restored };
      if (req.dry_run) return change;
      let backup: string | null = null;
      if (untouched) this.putBack(path, original, prev);
      else if (afterText !== null && before !== null) {
        // Changed since Brainstem wrote it: the user's edits are kept, only Brainstem's hooks go.
        backup = this.backup(path, before);
        writeAtomic(path, afterText, statSync(path).mode & 0o777);
      }
      delete manifest.installs[path];
      this.save(manifest);
      return { ...change, written: restored !== 'nothing', backup_path: backup };
    });
  }

  /** The original bytes back (or no file, as there was none), and the folder the install created if it is empty now. */
  private putBack(path: string, original: Buffer | null, prev: Installation): void {
    if (original !== null) {
      writeAtomic(path, original, prev.original_mode ?? 0o644);
      return;
    }
    unlinkSync(path);
    if (prev.created_dir) {
      try {
        rmdirSync(dirname(path));
      } catch {
        // Not empty: something else lives there now.
      }
    }
  }

  private backup(path: string, bytes: Buffer): string {
    const backup = path + BACKUP_SUFFIX;
    writeAtomic(backup, bytes, 0o600);
    return backup;
  }

  /**
   * The settings file of the scope. Its folder and the file itself must not be symlinks (a write would land wherever
   * they point), and a project's folder must be an absolute path to a directory.
   */
  private settingsPath(req: HooksRequest): string {
    let path: string;
    if (req.scope === 'user') {
      path = join(this.home, '.claude', 'settings.json');
    } else {
      if (req.project_dir === undefined || !isAbsolute(req.project_dir)) {
        throw new DomainError('invalid_input', 'project_dir: scope project needs the absolute path of the project folder');
      }
      const dir = normalize(req.project_dir);
      if (!lstatOrNull(dir)?.isDirectory()) throw new DomainError('hooks_path_refused', `project_dir: ${dir} is not a directory`);
      path = join(dir, '.claude', 'settings.local.json');
    }
    if (lstatOrNull(dirname(path))?.isSymbolicLink()) throw new DomainError('hooks_path_refused', `${dirname(path)} is a symlink: Brainstem writes no settings through one`);
    const file = lstatOrNull(path);
    if (file !== null && !file.isFile()) throw new DomainError('hooks_path_refused', `${path} is not a regular file (a symlink, say): Brainstem writes no settings through one`);
    return path;
  }

  private load(): Manifest {
    const bytes = readOrNull(this.manifestPath);
    if (bytes === null) return { installs: {} };
    const parsed = JSON.parse(bytes.toString('utf8')) as Partial<Manifest>;
    return { installs: parsed.installs ?? {} };
  }

  private save(manifest: Manifest): void {
    mkdirSync(dirname(this.manifestPath), { recursive: true, mode: 0o700 });
    writeAtomic(this.manifestPath, JSON.stringify(manifest, null, 2) + '\n', 0o600);
  }
}

/** The hook files of a home and a data directory (the manifest is kept there), as the service and the CLI both find them. */
export function claudeHooksFiles(home: string, dataDir: string): ClaudeHooksFiles {
  return new ClaudeHooksFiles(home, join(dataDir, 'claude-hooks.json'));
}

/** The service's installer: the files above, with Brainstem's hooks as this service writes them. */
export class ClaudeHooksInstaller {
  constructor(
    readonly files: ClaudeHooksFiles,
    /** Brainstem's hooks as installed now (the hook command names this service and the hook token's file). */
    private readonly hooks: () => BrainstemHooks,
  ) {}

  list(): InstalledHooks[] {
    return this.files.list();
  }

  install(req: HooksRequest): Promise<HooksChange> {
    return this.files.install(req, this.hooks());
  }

  uninstall(req: HooksRequest): Promise<HooksChange> {
    return this.files.uninstall(req);
  }
}
