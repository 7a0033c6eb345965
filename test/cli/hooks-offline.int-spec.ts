import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { ClaudeHooksFiles, claudeHooksFiles } from '../../src/external/claude-hooks.installer';
import { brainstemHooks } from '../../src/external/claude-settings';
import { tempDir } from '../support/temp-dir';

const BIN = resolve(__dirname, '../../bin/brainstem.js');

/** A port nothing listens on: where the CLI looks for the service, which is not running. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * `brainstem hooks uninstall` and `hooks status` as a real CLI process with no service running: they work on the
 * settings file and the manifest themselves, with the service's own code (the hooks installed here by that same code,
 * as the service installs them), under a temporary HOME and data directory.
 */
describe('brainstem hooks with the service down', () => {
  const home = tempDir('brainstem-hooks-offline-home-');
  const data = tempDir('brainstem-hooks-offline-data-');
  let env: NodeJS.ProcessEnv;
  let files: ClaudeHooksFiles;
  const settings = join(home.path, '.claude', 'settings.json');
  const hooks = brainstemHooks((e) => `brainstem hook ${e} --url http://127.0.0.1:1 --token-file /nowhere/hook-token`, { stop_wait_s: 60, permission_wait_s: 60 });

  beforeAll(async () => {
    env = { PATH: process.env.PATH, HOME: home.path, BRAINSTEM_JOURNAL_DIR: data.path, BRAINSTEM_URL: `http://127.0.0.1:${await closedPort()}` };
    files = claudeHooksFiles(home.path, data.path);
  });
  afterAll(() => {
    home.remove();
    data.remove();
  });

  const brainstem = (...args: string[]): Promise<{ code: number | null; out: string; err: string }> => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    return new Promise((r) => child.on('close', (code) => r({ code, out, err })));
  };
  const status = async () => {
    const r = await brainstem('hooks', 'status', '--json');
    expect(r.code).toBe(0);
    return (JSON.parse(r.out) as Array<{ scope: string; path: string }>).map((i) => `${i.scope} ${i.path}`);
  };

  it('Given hooks installed into a settings file, When uninstalled with no service, Then the file is back byte for byte, and status says installed, then not', async () => {
    mkdirSync(join(home.path, '.claude'), { recursive: true });
    const original = Buffer.from('{\n\t"theme": "dark ✓",\n\t"hooks": {\n\t\t"Stop": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}]\n\t}\n}', 'utf8');
    writeFileSync(settings, original, { mode: 0o640 });
    await files.install({ scope: 'user' }, hooks);
    expect(readFileSync(settings, 'utf8')).toContain('brainstem hook Stop');

    expect(await status()).toEqual([`user ${settings}`]);
    const listed = await brainstem('hooks', 'status');
    expect(listed).toMatchObject({ code: 0, out: expect.stringContaining(settings), err: expect.stringContaining('no service answers') });

    const preview = await brainstem('hooks', 'uninstall', '--dry-run');
    expect(preview).toMatchObject({ code: 0, out: expect.stringContaining(`--- ${settings}`) });
    expect(readFileSync(settings, 'utf8')).toContain('brainstem hook Stop');

    const done = await brainstem('hooks', 'uninstall', '--yes');
    expect(done).toMatchObject({ code: 0, out: expect.stringContaining(`Brainstem's hooks restored, byte for byte, ${settings}`) });
    expect(readFileSync(settings).equals(original)).toBe(true);
    expect(statSync(settings).mode & 0o777).toBe(0o640);
    expect(await status()).toEqual([]);
    expect(await brainstem('hooks', 'status')).toMatchObject({ code: 0, out: expect.stringContaining('not installed') });
    expect(await brainstem('hooks', 'uninstall', '--yes')).toMatchObject({ code: 0, out: expect.stringContaining('nothing to undo') });
  }, 60000);

  it('Given a project whose settings file the install created, When uninstalled with no service, Then the file and the folder it made are gone', async () => {
    const project = tempDir('brainstem-hooks-offline-project-');
    try {
      await files.install({ scope: 'project', project_dir: project.path }, hooks);
      const local = join(project.path, '.claude', 'settings.local.json');
      expect(existsSync(local)).toBe(true);
      expect(await status()).toEqual([`project ${local}`]);
      expect(await brainstem('hooks', 'uninstall', '--scope', 'project', '--project', project.path, '-y')).toMatchObject({ code: 0 });
      expect(existsSync(join(project.path, '.claude'))).toBe(false);
      expect(await status()).toEqual([]);
    } finally {
      project.remove();
    }
  }, 60000);

  it('Given a settings file made malformed after the install, When uninstalled with no service, Then the error says so and the file is left as it is', async () => {
    await files.install({ scope: 'user' }, hooks);
    const malformed = '{"hooks": {"Stop": [ oops';
    writeFileSync(settings, malformed);
    const r = await brainstem('hooks', 'uninstall', '--yes');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`brainstem hooks: claude_settings_malformed: ${settings}: not JSON`);
    expect(readFileSync(settings, 'utf8')).toBe(malformed);
    expect(await status()).toEqual([`user ${settings}`]);
  }, 60000);

  it('When an install is asked with no service, Then it is refused: only the service knows what its hooks run', async () => {
    const before = readFileSync(settings);
    const r = await brainstem('hooks', 'install', '--yes');
    expect(r).toMatchObject({ code: 3, err: expect.stringContaining('an install needs it, since its hooks name it') });
    expect(readFileSync(settings).equals(before)).toBe(true);
  }, 60000);
});
