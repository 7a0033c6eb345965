import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, buildConfig, installedDataDir } from './config.loader';

const yamlText = readFileSync(resolve(__dirname, '../../config/default.yaml'), 'utf8');
const build = (env: Record<string, string> = {}, argv: string[] = [], yaml = yamlText) =>
  buildConfig({ yamlText: yaml, yamlName: 'default.yaml', env, argv, cwd: '/srv/app', home: '/home/me' });

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('given only the defaults file, has the documented defaults with paths resolved', () => {
    const c = build();
    expect(c.server).toEqual({ host: '127.0.0.1', port: 4820, api_token: null, auth: 'token', allowed_hosts: [], body_limit_bytes: 1048576 });
    expect(c.journal).toEqual({ dir: '/srv/app/journal', url: null, sync: true, checkpoint_every: 4096 });
    expect(c.supervision).toEqual({
      debounce_ms: 2000,
      restore_ttl_s: 900,
      stall_watchdog_interval_s: 90,
      stall_threshold_s: 900,
      stall_cooldown_s: 1800,
      stall_watchdog_startup_delay_s: 45,
    });
    expect(c.profiles.dir).toBe('/home/me/.brainstem/profiles');
    expect(c.main_brain).toEqual({
      driver: 'auto',
      round_timeout_s: 600,
      command: null,
      webhook_url: null,
      runtime: 'auto',
      profile: 'main-brain',
      context_budget_tokens: 150000,
      budget_usd: null,
    });
    expect(c.sessions.max_sessions).toBe(32);
    expect(c.worktrees.dir).toBe('/srv/app/journal/worktrees');
    expect(c.plugins).toEqual([]);
    expect(c.retention_s).toBe(86400);
  });

  it('when env vars are set, they win over the file, and flags win over env', () => {
    const c = build(
      { BRAINSTEM_PORT: '5000', BRAINSTEM_JOURNAL_DIR: '/data/j', BRAINSTEM_JOURNAL_SYNC: 'false', BRAINSTEM_PLUGINS: './a.js, ./b.js' },
      ['--port', '6000', '--supervision-stall-watchdog-interval-s=0'],
    );
    expect(c.server.port).toBe(6000);
    expect(c.journal.dir).toBe('/data/j');
    expect(c.journal.sync).toBe(false);
    expect(c.plugins).toEqual(['./a.js', './b.js']);
    expect(c.supervision.stall_watchdog_interval_s).toBe(0);
    expect(c.worktrees.dir).toBe('/data/j/worktrees');
    expect(build({ BRAINSTEM_WORKTREES_DIR: '~/trees' }).worktrees.dir).toBe('/home/me/trees');
  });

  it('given BRAINSTEM_NODE_ID, BRAINSTEM_NODE_LEASE_TTL_S and BRAINSTEM_NODE_URL, names the node, its lease and its address; refuses an id that is not a slug', () => {
    expect(build({}).node).toEqual({ id: 'local', lease_ttl_s: 6, url: null });
    expect(build({ BRAINSTEM_NODE_ID: 'node-b', BRAINSTEM_NODE_LEASE_TTL_S: '10', BRAINSTEM_NODE_URL: 'http://10.0.0.2:4820' }).node).toEqual({ id: 'node-b', lease_ttl_s: 10, url: 'http://10.0.0.2:4820' });
    expect(problemsOf(() => build({ BRAINSTEM_NODE_URL: 'http://10.0.0.2:4820/api' }))).toEqual([
      'BRAINSTEM_NODE_URL: expected the node\'s base URL, http(s)://host:port with no path, got "http://10.0.0.2:4820/api"',
    ]);
    expect(() => build({ BRAINSTEM_NODE_ID: 'Node B' })).toThrow(/BRAINSTEM_NODE_ID: expected lowercase letters/);
    expect(() => build({ BRAINSTEM_NODE_LEASE_TTL_S: '0' })).toThrow(/BRAINSTEM_NODE_LEASE_TTL_S/);
  });

  it('given BRAINSTEM_JOURNAL_URL or --journal-url, keeps the database URL, and refuses a URL that is not postgres://', () => {
    expect(build({ BRAINSTEM_JOURNAL_URL: 'postgres://u:p@db:5432/brainstem' }).journal.url).toBe('postgres://u:p@db:5432/brainstem');
    expect(build({}, ['--journal-url', 'postgresql://db/b']).journal.url).toBe('postgresql://db/b');
    expect(problemsOf(() => build({ BRAINSTEM_JOURNAL_URL: 'mysql://db/b' }))).toEqual(['BRAINSTEM_JOURNAL_URL: expected a postgres:// or postgresql:// URL']);
  });

  it('accepts a negative watchdog interval (0 or less disables it)', () => {
    expect(build({ BRAINSTEM_SUPERVISION_STALL_WATCHDOG_INTERVAL_S: '-1' }).supervision.stall_watchdog_interval_s).toBe(-1);
  });

  it('when values are bad, reports every one naming its variable', () => {
    const problems = problemsOf(() =>
      build({
        BRAINSTEM_PORT: 'eighty',
        BRAINSTEM_SUPERVISION_STALL_THRESHOLD_S: '-5',
        BRAINSTEM_MAIN_BRAIN_DRIVER: 'telepathy',
        BRAINSTEM_JOURNAL_SYNC: 'maybe',
      }),
    );
    expect(problems).toEqual([
      'BRAINSTEM_PORT: expected an integer, got "eighty"',
      'BRAINSTEM_JOURNAL_SYNC: expected true or false, got "maybe"',
      'BRAINSTEM_SUPERVISION_STALL_THRESHOLD_S: expected an integer in 0..2147483647, got -5',
      'BRAINSTEM_MAIN_BRAIN_DRIVER: expected one of auto, agent, stream, command, webhook, got "telepathy"',
    ]);
  });

  it('takes a retention longer than a Node timer holds (its timer steps), and refuses none at all', () => {
    expect(build({ BRAINSTEM_RETENTION_S: '31536000' }).retention_s).toBe(31536000);
    expect(problemsOf(() => build({ BRAINSTEM_RETENTION_S: '0' }))).toEqual(['BRAINSTEM_RETENTION_S: expected an integer in 1..2147483647, got 0']);
  });

  it('refuses timer durations a Node timer cannot hold (longer ones fire at once)', () => {
    expect(
      problemsOf(() =>
        build({
          BRAINSTEM_MAIN_BRAIN_ROUND_TIMEOUT_S: '2147484',
          BRAINSTEM_SUPERVISION_STALL_WATCHDOG_INTERVAL_S: '2147484',
          BRAINSTEM_SUPERVISION_STALL_WATCHDOG_STARTUP_DELAY_S: '2147484',
        }),
      ),
    ).toEqual([
      'BRAINSTEM_SUPERVISION_STALL_WATCHDOG_INTERVAL_S: expected an integer in -2147483647..2147483, got 2147484',
      'BRAINSTEM_SUPERVISION_STALL_WATCHDOG_STARTUP_DELAY_S: expected an integer in 0..2147483, got 2147484',
      'BRAINSTEM_MAIN_BRAIN_ROUND_TIMEOUT_S: expected an integer in 1..2147483, got 2147484',
    ]);
    expect(build({ BRAINSTEM_MAIN_BRAIN_ROUND_TIMEOUT_S: '2147483' }).main_brain.round_timeout_s).toBe(2147483);
  });

  it('names the file key when the YAML itself is wrong', () => {
    expect(problemsOf(() => build({}, [], yamlText.replace('port: 4820', 'port: "x"')))).toEqual([
      'default.yaml server.port: expected an integer, got "x"',
    ]);
    expect(problemsOf(() => build({}, [], 'server: [unclosed'))[0]).toMatch(/^default.yaml: not valid YAML/);
  });

  it('requires the command or URL of the chosen main-brain driver', () => {
    expect(problemsOf(() => build({ BRAINSTEM_MAIN_BRAIN_DRIVER: 'command' }))).toEqual([
      'BRAINSTEM_MAIN_BRAIN_COMMAND: required when BRAINSTEM_MAIN_BRAIN_DRIVER is command',
    ]);
    expect(problemsOf(() => build({ BRAINSTEM_MAIN_BRAIN_DRIVER: 'webhook', BRAINSTEM_MAIN_BRAIN_WEBHOOK_URL: 'ftp://x' }))[0]).toMatch(
      /^BRAINSTEM_MAIN_BRAIN_WEBHOOK_URL: expected an http\(s\) URL/,
    );
    expect(build({ BRAINSTEM_MAIN_BRAIN_DRIVER: 'command', BRAINSTEM_MAIN_BRAIN_COMMAND: 'brain --round' }).main_brain.command).toBe('brain --round');
  });

  it('refuses authentication off on a non-loopback host, and accepts it on loopback; a non-loopback host needs nothing more (a token always exists)', () => {
    expect(problemsOf(() => build({ BRAINSTEM_HOST: '0.0.0.0', BRAINSTEM_AUTH: 'off' }))).toEqual(['BRAINSTEM_AUTH: off is for loopback only; refusing to serve 0.0.0.0 without credentials']);
    expect(build({ BRAINSTEM_HOST: '::1', BRAINSTEM_AUTH: 'off' }).server.auth).toBe('off');
    expect(build({ BRAINSTEM_HOST: '0.0.0.0' }).server.host).toBe('0.0.0.0');
    expect(problemsOf(() => build({ BRAINSTEM_AUTH: 'none' }))).toEqual(['BRAINSTEM_AUTH: expected one of token, off, got "none"']);
  });

  it('reads BRAINSTEM_ALLOWED_HOSTS as a list and refuses an entry that is not a host or host:port', () => {
    expect(build({ BRAINSTEM_ALLOWED_HOSTS: 'a.test, b.test:8443' }).server.allowed_hosts).toEqual(['a.test', 'b.test:8443']);
    expect(problemsOf(() => build({ BRAINSTEM_ALLOWED_HOSTS: 'a.test:http' }))).toEqual(['BRAINSTEM_ALLOWED_HOSTS: not a host name or host:port: "a.test:http"']);
    expect(build({ BRAINSTEM_HOST: '::1' }).server.host).toBe('::1');
  });

  it('refuses a token with surrounding whitespace, which no client header could match', () => {
    expect(problemsOf(() => build({ BRAINSTEM_API_TOKEN: 'tok ' }))).toEqual(['BRAINSTEM_API_TOKEN: must not start or end with whitespace']);
    expect(build({ BRAINSTEM_API_TOKEN: 'tok' }).server.api_token).toBe('tok');
  });

  it('given an installed package, keeps the data in the state directory instead of ./journal, unless the environment or a flag names one', () => {
    const installed = (env: Record<string, string>, argv: string[] = []) =>
      buildConfig({ yamlText, yamlName: 'default.yaml', env, argv, cwd: '/srv/app', home: '/home/me', dataDir: installedDataDir(env, '/home/me') });
    expect(installed({}).journal.dir).toBe('/home/me/.brainstem/journal');
    expect(installed({ XDG_STATE_HOME: '/home/me/.local/state' }).journal.dir).toBe('/home/me/.local/state/brainstem/journal');
    // The XDG spec ignores a relative XDG_STATE_HOME.
    expect(installed({ XDG_STATE_HOME: 'state' }).journal.dir).toBe('/home/me/.brainstem/journal');
    expect(installed({ BRAINSTEM_JOURNAL_DIR: './j' }).journal.dir).toBe('/srv/app/j');
    expect(installed({}, ['--journal-dir', '/data/j']).journal.dir).toBe('/data/j');
    expect(installed({}).profiles.dir).toBe('/home/me/.brainstem/profiles');
  });
});
