import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, lstat, mkdir, open, readFile, readdir, realpath, rename, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { DomainError } from '../../common/domain-error';
import { ApplyFs } from './apply-fs.port';

const SKILL_MAX_FILES = 200;
const SKILL_MAX_BYTES = 1024 * 1024;

/** ApplyFs on the local disk. */
export class NodeApplyFs implements ApplyFs {
  async targetDir(dir: string): Promise<string> {
    if (!isAbsolute(dir)) throw invalid(`dir: must be an absolute path, not ${JSON.stringify(dir)}`);
    let real: string;
    try {
      real = await realpath(dir);
      if (!(await stat(real)).isDirectory()) throw unusable(`dir: ${dir} is not a directory`);
    } catch (e) {
      if (e instanceof DomainError) throw e;
      throw unusable(`dir: ${dir} does not exist`);
    }
    try {
      await access(real, constants.W_OK);
    } catch {
      throw unusable(`dir: ${dir} is not writable`);
    }
    return real;
  }

  async read(root: string, path: string): Promise<string | null> {
    const full = await this.contained(root, path);
    let handle;
    try {
      // Non-blocking, so a FIFO in the target cannot hold the open (and a thread of the pool) forever.
      handle = await open(full, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw fsRefusal(path, e);
    }
    try {
      if (!(await handle.stat()).isFile()) throw notAFile(path);
      return await handle.readFile('utf8');
    } catch (e) {
      throw e instanceof DomainError ? e : fsRefusal(path, e);
    } finally {
      await handle.close();
    }
  }

  async writeAll(root: string, files: ReadonlyArray<{ path: string; content: string }>): Promise<void> {
    const staged: Array<{ temp: string; target: string }> = [];
    try {
      for (const file of files) {
        const target = await this.contained(root, file.path);
        try {
          await mkdir(dirname(target), { recursive: true });
          // The directories just made may not have existed when the path was checked: check again.
          await this.contained(root, file.path);
          const existing = await lstat(target).catch(() => null);
          if (existing && !existing.isFile()) throw notAFile(file.path);
          if (existing && (existing.mode & 0o222) === 0) throw readOnly(file.path);
          const temp = `${target}.brainstem-${randomBytes(6).toString('hex')}.tmp`;
          await writeFile(temp, file.content, { flag: 'wx' });
          staged.push({ temp, target });
          // The replacement keeps the file's mode: a 0600 file holding secrets must not become world-readable.
          if (existing) await chmod(temp, existing.mode & 0o7777);
        } catch (e) {
          throw e instanceof DomainError ? e : fsRefusal(file.path, e);
        }
      }
    } catch (e) {
      await Promise.all(staged.map((s) => unlink(s.temp).catch(() => undefined)));
      throw e;
    }
    for (const s of staged) await rename(s.temp, s.target);
  }

  async exists(root: string, path: string): Promise<boolean> {
    const full = await this.contained(root, path);
    return lstat(full).then(
      () => true,
      () => false,
    );
  }

  async remove(root: string, path: string): Promise<void> {
    const full = await this.contained(root, path);
    try {
      if (!(await lstat(full)).isFile()) throw notAFile(path);
      await unlink(full);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e instanceof DomainError ? e : fsRefusal(path, e);
    }
  }

  async removeEmptyDir(root: string, path: string): Promise<boolean> {
    const full = await this.contained(root, path);
    if (full === root) return false;
    try {
      if (!(await lstat(full)).isDirectory()) return false;
      await rmdir(full);
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return true;
      // Not empty (the user keeps files there) or not ours to remove: it stays.
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EACCES' || code === 'EPERM' || code === 'EBUSY') return false;
      throw fsRefusal(path, e);
    }
  }

  async readSkill(dir: string): Promise<Array<{ path: string; content: string }> | null> {
    try {
      if (!(await stat(join(dir, 'SKILL.md'))).isFile()) return null;
    } catch {
      return null;
    }
    const out: Array<{ path: string; content: string }> = [];
    const walk = async (at: string): Promise<void> => {
      for (const entry of await readdir(at, { withFileTypes: true })) {
        const full = join(at, entry.name);
        if (entry.isDirectory()) await walk(full);
        else if (entry.isFile()) {
          if (out.length >= SKILL_MAX_FILES) throw new DomainError('skill_too_large', `skill ${dir}: more than ${SKILL_MAX_FILES} files`);
          if ((await stat(full)).size > SKILL_MAX_BYTES) throw new DomainError('skill_too_large', `skill ${dir}: ${entry.name} is over 1 MiB`);
          out.push({ path: relative(dir, full).split(sep).join('/'), content: await readFile(full, 'utf8') });
        }
        // Symlinks inside a skill are not followed.
      }
    };
    await walk(dir);
    return out.sort((a, b) => a.path.localeCompare(b.path));
  }

  /** `root/path`, refused when the path, or any existing part of it, resolves outside `root`. */
  private async contained(root: string, path: string): Promise<string> {
    const full = resolve(root, path);
    if (!inside(root, full)) throw escape(path);
    for (let at = full; ; at = dirname(at)) {
      const exists = await lstat(at).then(
        () => true,
        () => false,
      );
      if (exists) {
        const real = await realpath(at).catch(() => null);
        if (real === null || !inside(root, real)) throw escape(path);
        return full;
      }
      if (at === root) return full;
    }
  }
}

function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function invalid(message: string): DomainError {
  return new DomainError('invalid_input', message);
}

function unusable(message: string): DomainError {
  return new DomainError('dir_unusable', message);
}

function notAFile(path: string): DomainError {
  return new DomainError('apply_path_refused', `${path}: exists in the target but is not a regular file; refused`, { path });
}

/** What the filesystem refused, as a 4xx naming the file: the target is the user's to fix, not a fault of ours. */
function fsRefusal(path: string, e: unknown): Error {
  const code = (e as NodeJS.ErrnoException)?.code ?? 'unknown';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new DomainError('permission_denied', `${path}: cannot be read or written in the target (${code})`, { path });
  }
  if (code === 'ENOTDIR' || code === 'EISDIR' || code === 'EEXIST' || code === 'ELOOP') {
    return new DomainError('apply_path_refused', `${path}: a part of the path in the target is not what it should be (${code}); refused`, { path });
  }
  return e as Error;
}

/** A file nobody may write (no write bit) is one the user protected: it is not replaced, even where we could. */
function readOnly(path: string): DomainError {
  return new DomainError('permission_denied', `${path}: is read-only in the target; make it writable to apply`, { path });
}

function escape(path: string): DomainError {
  return new DomainError('apply_path_refused', `${path}: leads outside the target directory (symlink); refused`, { path });
}
