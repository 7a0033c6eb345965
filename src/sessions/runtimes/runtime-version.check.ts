import { execFile } from 'node:child_process';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { findExecutable } from '../../common/executable';
import { AGENT_RUNTIMES } from '../../common/agent-runtimes';
import { SESSION_HOST, SessionHost } from '../session.ports';
import { parseVersion, versionWarning } from './runtime-versions';

/** How long a runtime gets to print its version (a node CLI loading cold on a busy machine is slow). */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * At start, each agent runtime on the service's PATH is asked its version (`<exe> --version`), and one outside the
 * tested range, or unreadable, is logged as a warning, and each version read is kept (the hosted brain's presence
 * names it). The probes run in the background: they never delay the start nor fail it, and any still running when
 * the service stops is killed.
 */
@Injectable()
export class RuntimeVersionCheck implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RuntimeVersions');
  private readonly stop = new AbortController();
  private readonly versions = new Map<string, string>();

  constructor(@Inject(SESSION_HOST) private readonly host: SessionHost) {}

  onApplicationBootstrap(): void {
    for (const { name, executable } of AGENT_RUNTIMES) {
      const path = findExecutable(executable, this.host.env.PATH ?? '', this.host.cwd);
      if (path) void this.probe(name, path);
    }
  }

  onApplicationShutdown(): void {
    this.stop.abort();
  }

  /** The version (x.y.z) the runtime's executable printed at start; null until it answered, or when it was unreadable. */
  version(runtime: string): string | null {
    return this.versions.get(runtime) ?? null;
  }

  private async probe(runtime: string, path: string): Promise<void> {
    const output = await new Promise<string | null>((resolve) =>
      execFile(path, ['--version'], { timeout: PROBE_TIMEOUT_MS, killSignal: 'SIGKILL', signal: this.stop.signal }, (error, stdout, stderr) => {
        const printed = `${stdout}${stderr}`;
        resolve(printed.trim() === '' || (error && error.killed) ? null : printed);
      }),
    );
    if (this.stop.signal.aborted) return;
    const version = output === null ? null : parseVersion(output);
    if (version !== null) this.versions.set(runtime, version);
    const warning = versionWarning(runtime, output);
    if (warning) this.logger.warn(`${warning} (${path})`);
  }
}
