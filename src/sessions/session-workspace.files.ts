import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SessionFile, SessionWorkspace } from './session-workspace.port';

/** The session workspace on the local disk: per-session files under `<root>/<session id>/`. */
export class FileSessionWorkspace implements SessionWorkspace {
  constructor(private readonly root: string) {}

  async isDirectory(path: string): Promise<boolean> {
    return stat(path).then(
      (s) => s.isDirectory(),
      () => false,
    );
  }

  configDir(sessionId: string): string {
    return join(this.root, sessionId);
  }

  async writeConfig(sessionId: string, files: readonly SessionFile[]): Promise<void> {
    for (const file of files) {
      const target = join(this.configDir(sessionId), file.path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, file.content);
    }
  }

  removeConfig(sessionId: string): Promise<void> {
    return rm(this.configDir(sessionId), { recursive: true, force: true });
  }
}
