import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';

const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);
/** What the package is built from; the rest (tests, benches, the repository's own build and journal) stays behind. */
const LEFT_OUT = new Set(['.git', 'node_modules', 'dist', 'journal', 'test', 'bench', 'coverage', 'test-artifacts']);

/** npm's environment without what an npm script that runs jest would pass on (its prefix, its package). */
function npmEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig']);
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_') || keep.has(k.toLowerCase())));
}

/**
 * The package as a user gets it: `npm pack` (its prepack builds dist/ in a copy of the sources, so this repository's own
 * build is left alone), `npm install -g` of the tarball into a prefix of its own, and `brainstem serve` from an empty
 * folder with a home of its own. One install: it is slow.
 */
describe('the packed package, installed with npm install -g', () => {
  const dirs = { stage: tempDir('brainstem-pack-'), prefix: tempDir('brainstem-prefix-'), home: tempDir('brainstem-home-'), cwd: tempDir('brainstem-cwd-') };
  afterAll(() => Object.values(dirs).forEach((d) => d.remove()));

  it('installs a brainstem command that serves the API and the dashboard from any folder, its data under ~/.brainstem', async () => {
    // Given the sources packed as npm pack does it (prepack: a clean build of the service and the dashboard)
    const stage = join(dirs.stage.path, 'brainstem');
    mkdirSync(stage);
    for (const entry of readdirSync(ROOT)) if (!LEFT_OUT.has(entry)) cpSync(join(ROOT, entry), join(stage, entry), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(stage, 'node_modules'));
    const packed = await run('npm', ['pack', '--json', '--pack-destination', dirs.stage.path], { cwd: stage, env: npmEnv(), maxBuffer: 64 << 20 });
    const [{ filename, files }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const paths = files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['bin/brainstem.js', 'config/default.yaml', 'dist/src/main.js', 'dist/src/cli/main.js', 'dist/web/index.html']));
    // Only the build: no sources, no tests, no source maps
    expect(paths.filter((p) => p.startsWith('src/') || p.startsWith('test/') || p.endsWith('.map') || p.endsWith('.ts'))).toEqual([]);

    // When it is installed globally into a prefix of its own (its dependencies from the registry or npm's cache)
    const tarball = join(dirs.stage.path, filename);
    await run('npm', ['install', '-g', '--prefix', dirs.prefix.path, '--prefer-offline', '--no-audit', '--no-fund', tarball], { env: npmEnv(), maxBuffer: 64 << 20 });
    const bin = join(dirs.prefix.path, 'bin', 'brainstem');
    expect(existsSync(bin)).toBe(true);

    // And `brainstem serve` runs from an empty folder, with a home of its own and no agent on PATH
    const env = { PATH: dirname(process.execPath), HOME: dirs.home.path };
    const child = spawn(bin, ['serve', '--port', '0'], { cwd: dirs.cwd.path, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      const url = await waitFor(
        () => {
          if (child.exitCode !== null) throw new Error(`brainstem serve exited ${child.exitCode}:\n${output}`);
          return /Brainstem listening on (http:\/\/\S+)/.exec(output)?.[1];
        },
        { timeoutMs: 60_000, what: 'the installed service to listen' },
      );

      // Then it answers health, and serves the dashboard page and its script
      expect(await (await fetch(`${url}/api/v1/health`)).json()).toEqual({ status: 'ok' });
      const page = await (await fetch(`${url}/`)).text();
      const script = /<script[^>]+src="\/?([^"]+\.js)"/.exec(page)?.[1];
      expect(script).toBeDefined();
      const asset = await fetch(`${url}/${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(/javascript/);

      // And its data is under ~/.brainstem, none in the folder it was started from
      const data = join(dirs.home.path, '.brainstem', 'journal');
      expect(existsSync(join(data, 'db', 'CURRENT'))).toBe(true);
      expect(existsSync(join(data, 'api-token'))).toBe(true);
      expect(output).toContain(`user token: ${join(data, 'api-token')}`);
      expect(readdirSync(dirs.cwd.path)).toEqual([]);

      // And the installed CLI finds that token by itself
      const status = await run(bin, ['status', '--json', '--url', url], { cwd: dirs.cwd.path, env });
      expect(JSON.parse(status.stdout)).toMatchObject({ url, ready: { journal: { open: true } }, sessions: { total: 0 } });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 900_000);
});
