import { chmodSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CapturedLogger } from '../support/captured-logger';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';

/** The start-up check of the agent runtimes' versions, against real executables on the service's PATH. */
describe('the agent runtimes found at start', () => {
  const bin = tempDir('brainstem-version-bin-');
  const logs = new CapturedLogger();

  /** An executable `name` in the test's bin directory that prints `output` when asked its version. */
  function fake(name: string, output: string): void {
    const file = join(bin.path, name);
    writeFileSync(file, `#!/bin/sh\n[ "$1" = --version ] && printf '%s\\n' '${output}'\n`);
    chmodSync(file, 0o755);
  }

  beforeAll(() => {
    fake('claude', '2.0.5 (Claude Code)');
    fake('codex', 'no version here');
  });
  // The logger is given to the app as it is created: the probes start while it boots, on the PATH it was started with.
  useTestApp({}, { logger: logs, host: { env: { ...process.env, PATH: `${bin.path}:${process.env.PATH}` }, home: homedir(), cwd: process.cwd() } });
  afterAll(() => {
    logs.release();
    bin.remove();
  });

  it('given claude older than tested and a codex whose version cannot be read, then each is a warning naming the runtime, what was found and the tested range', async () => {
    const warnings = await waitFor(() => {
      const found = logs.messages('warn', 'RuntimeVersions');
      return found.length >= 2 ? found : undefined;
    }, { timeoutMs: 30000, what: 'the version warnings' });
    expect(warnings.sort()).toEqual([
      `claude-code 2.0.5 is older than tested (2.1.197 to 2.1.332); update it (${join(bin.path, 'claude')})`,
      `codex: its version could not be read (--version printed "no version here"); tested with 0.169.0 to 0.171.0 (${join(bin.path, 'codex')})`,
    ]);
  }, 60000);
});
