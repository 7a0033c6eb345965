import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { buildConfig } from '../../src/config/config.loader';
import { BrainstemConfig } from '../../src/config/config.schema';

/** The user's token the test services run with (BRAINSTEM_API_TOKEN), unless a test sets another. */
export const TEST_USER_TOKEN = 'test-user-token';

const DEFAULT_YAML = readFileSync(resolve(__dirname, '../../config/default.yaml'), 'utf8');

/** The real config pipeline (default.yaml + env), with test env values layered on top. */
export function testConfig(env: Record<string, string> = {}): BrainstemConfig {
  // Rounds are published unless a test asks for a driver: a claude on the tester's PATH must not become the brain.
  // Workers run unsandboxed unless a test asks for the sandbox (test/sandbox, and the real runtimes' specs): the
  // others check what Brainstem does with a worker's pids, signals and Bash permission requests as the host sees them,
  // which the sandbox changes on purpose (its own PID namespace; Bash allowed unasked inside).
  const withDriver = { BRAINSTEM_MAIN_BRAIN_DRIVER: 'stream', BRAINSTEM_SANDBOX: 'off', ...env };
  return buildConfig({ yamlText: DEFAULT_YAML, yamlName: 'config/default.yaml', env: withDriver, argv: [], cwd: process.cwd(), home: homedir() });
}
