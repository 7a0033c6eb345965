import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';

/**
 * Installing Brainstem's hooks into Claude Code's settings and taking them out, through the REST routes, on real files:
 * the user's hooks untouched, the file backed up first, the preview before anything is written, and an uninstall that
 * puts back exactly what was there, byte for byte.
 */
describe("Brainstem's hooks in Claude Code's settings (install, preview, uninstall)", () => {
  const home = tempDir('brainstem-hooks-install-home-');
  const project = tempDir('brainstem-hooks-install-project-');
  const t = useTestApp({}, { each: true, host: { env: { ...process.env, HOME: '/nonexistent' }, get home() { return home.path; }, cwd: '/' } });
  afterAll(() => {
    home.remove();
    project.remove();
  });

  const settings = () => join(home.path, '.claude', 'settings.json');
  const post = async (verb: 'install' | 'uninstall', payload: object) => {
    const res = await t.inject({ method: 'POST', url: `/api/v1/external/claude-hooks/${verb}`, payload });
    return { status: res.statusCode, body: res.json() };
  };
  const write = (text: string | Buffer) => {
    mkdirSync(join(home.path, '.claude'), { recursive: true });
    writeFileSync(settings(), text);
  };

  it("Given the user's settings written their way (tabs, unicode, no final newline, a hook of theirs), When installed then uninstalled, Then their hook is kept beside Brainstem's and the file comes back byte for byte", async () => {
    const original = Buffer.from('{\n\t"theme": "dark ✓",\n\t"hooks": {\n\t\t"Stop": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}]\n\t},\n\t"z": [1,2]\n}', 'utf8');
    write(original);
    const mode = statSync(settings()).mode & 0o777;

    // The preview writes nothing
    const preview = await post('install', { scope: 'user', dry_run: true });
    expect(preview).toMatchObject({ status: 200, body: { written: false, backup_path: null, path: settings() } });
    expect(preview.body.diff).toContain(`--- ${settings()}`);
    expect(preview.body.diff).toContain('+\t\t\t\t\t\t"command": ');
    expect(readFileSync(settings()).equals(original)).toBe(true);

    const installed = await post('install', { scope: 'user' });
    expect(installed.body).toMatchObject({ written: true, backup_path: `${settings()}.brainstem-backup`, diff: preview.body.diff });
    expect(readFileSync(`${settings()}.brainstem-backup`).equals(original)).toBe(true);
    const merged = JSON.parse(readFileSync(settings(), 'utf8'));
    expect(merged.theme).toBe('dark ✓');
    expect(merged.hooks.Stop[0]).toEqual({ hooks: [{ type: 'command', command: './notify.sh' }] });
    expect(merged.hooks.Stop[1].hooks[0].command).toMatch(/brainstem\.js hook Stop --url \S+ --token-file \S+hook-token/);
    expect(statSync(settings()).mode & 0o777).toBe(mode);
    // The hook token's file, readable by the user alone
    const tokenFile = join(t.config.journal.dir, 'hook-token');
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);

    // Installing again changes nothing
    expect((await post('install', { scope: 'user' })).body).toMatchObject({ written: false, diff: '' });
    const listed = await t.inject({ method: 'GET', url: '/api/v1/external/claude-hooks' });
    expect(listed.json().installs).toEqual([{ scope: 'user', path: settings(), created_dir: false, installed_at: expect.any(String) }]);

    const uninstalled = await post('uninstall', { scope: 'user' });
    expect(uninstalled.body).toMatchObject({ written: true, restored: 'original' });
    expect(readFileSync(settings()).equals(original)).toBe(true);
    expect((await post('uninstall', { scope: 'user' })).body).toMatchObject({ written: false, restored: 'nothing' });
  });

  it('Given no settings file (nor .claude), When installed then uninstalled, Then the file and the folder the install made are gone again', async () => {
    const dir = project.path;
    expect((await post('install', { scope: 'project', project_dir: dir })).body).toMatchObject({ written: true, backup_path: null, path: join(dir, '.claude', 'settings.local.json') });
    expect((await post('uninstall', { scope: 'project', project_dir: dir })).body).toMatchObject({ written: true, restored: 'original' });
    expect(existsSync(join(dir, '.claude'))).toBe(false);
  });

  it("Given the user edited the file after the install, When uninstalled, Then their edits stay and only Brainstem's hooks go (the file as it was is backed up)", async () => {
    write('{"model": "opus"}\n');
    await post('install', { scope: 'user' });
    const edited = JSON.parse(readFileSync(settings(), 'utf8'));
    edited.permissions = { deny: ['Bash(curl *)'] };
    writeFileSync(settings(), JSON.stringify(edited, null, 2) + '\n');
    const uninstalled = await post('uninstall', { scope: 'user' });
    expect(uninstalled.body).toMatchObject({ written: true, restored: 'hooks_removed', backup_path: `${settings()}.brainstem-backup` });
    expect(JSON.parse(readFileSync(settings(), 'utf8'))).toEqual({ model: 'opus', permissions: { deny: ['Bash(curl *)'] } });
  });

  it('Given settings claude would not read as hooks, a symlinked file, a relative or missing project folder, Then nothing is written and the refusal says why', async () => {
    write('{"hooks": ["not", "events"]}');
    expect(await post('install', { scope: 'user' })).toMatchObject({ status: 409, body: { code: 'claude_settings_malformed' } });
    expect(readFileSync(settings(), 'utf8')).toBe('{"hooks": ["not", "events"]}');

    const elsewhere = join(project.path, 'elsewhere.json');
    writeFileSync(elsewhere, '{}');
    mkdirSync(join(project.path, 'p', '.claude'), { recursive: true });
    symlinkSync(elsewhere, join(project.path, 'p', '.claude', 'settings.local.json'));
    expect(await post('install', { scope: 'project', project_dir: join(project.path, 'p') })).toMatchObject({ status: 400, body: { code: 'hooks_path_refused' } });
    expect(readFileSync(elsewhere, 'utf8')).toBe('{}');

    expect(await post('install', { scope: 'project', project_dir: 'relative/dir' })).toMatchObject({ status: 400, body: { code: 'invalid_input' } });
    expect(await post('install', { scope: 'project' })).toMatchObject({ status: 400, body: { code: 'invalid_input' } });
    expect(await post('install', { scope: 'project', project_dir: join(project.path, 'missing') })).toMatchObject({ status: 400, body: { code: 'hooks_path_refused' } });
    expect(await post('install', { scope: 'machine' })).toMatchObject({ status: 400, body: { code: 'invalid_input' } });
  });

  it('Given a principal other than the user, When it installs hooks, Then it is refused', async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/external/claude-hooks/install', headers: t.auth('main_brain'), payload: { scope: 'user' } });
    expect(res.statusCode).toBe(403);
  });
});
