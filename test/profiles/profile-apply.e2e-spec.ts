import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';

const API = '/api/v1/agent-profiles';
const FAKE_BIN = resolve(__dirname, '../fixtures/bin');

describe('Agent Profile preview and apply (HTTP, real temp dirs)', () => {
  /** The environment and home the service runs in: tests change what is on its PATH and where its home is. */
  const host = { env: { ...process.env } as Record<string, string | undefined>, home: homedir(), cwd: process.cwd() };
  const t = useTestApp({}, { host });
  let work: { path: string; remove: () => void };
  let n = 0;
  /** A fresh, empty target directory per test. */
  const target = () => {
    const dir = join(work.path, `t${++n}`);
    mkdirSync(dir);
    return dir;
  };

  beforeAll(() => {
    work = tempDir('brainstem-apply-');
  });
  afterAll(() => {
    work.remove();
  });

  const get = (url: string) => t.inject({ method: 'GET', url });
  const post = (url: string, payload: object = {}) => t.inject({ method: 'POST', url, payload });
  const apply = (id: string, body: object) => post(`${API}/${id}/apply`, body);
  const preview = (id: string, q: Record<string, string>) => get(`${API}/${id}/preview?${new URLSearchParams(q).toString()}`);
  const read = (dir: string, path: string) => readFileSync(join(dir, path), 'utf8');
  const actions = (files: Array<{ path: string; action: string }>) => Object.fromEntries(files.map((f) => [f.path, f.action]));

  it('previews without writing anything', async () => {
    // Given an empty directory; When previewing the code reviewer for claude-code
    const dir = target();
    const res = await preview('code-reviewer', { runtime: 'claude-code', dir });
    // Then every file is a create, with its content, and the directory stays empty
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ runtime: 'claude-code', runtime_source: 'requested', errors: [] });
    expect(actions(body.files)).toEqual({
      '.claude/settings.json': 'create',
      '.claude/agents/code-reviewer.md': 'create',
      '.mcp.json': 'create',
    });
    expect(JSON.parse(body.files[0].content).permissions.defaultMode).toBe('plan');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('previews with what is on disk now: current is null for a new file, the text of an existing one, and withheld when too large', async () => {
    // Given a directory holding a hand-written settings.json and an AGENTS.md too large to return
    const dir = target();
    mkdirSync(join(dir, '.claude'));
    const mine = '{\n  "model": "opus"\n}\n';
    writeFileSync(join(dir, '.claude/settings.json'), mine);
    const claude = (await preview('code-reviewer', { runtime: 'claude-code', dir })).json();
    // Then the existing file's current text is returned beside the content apply would write, and a new file's is null
    const byPath = Object.fromEntries(claude.files.map((f: { path: string }) => [f.path, f]));
    expect(byPath['.claude/settings.json']).toMatchObject({ current: mine, action: 'update' });
    expect(byPath['.claude/settings.json'].content).not.toBe(mine);
    expect(byPath['.mcp.json']).toMatchObject({ current: null, action: 'create' });
    expect(byPath['.mcp.json']).not.toHaveProperty('current_too_large');
    // When a file on disk is over the bound: Then its text is withheld and marked
    writeFileSync(join(dir, 'AGENTS.md'), 'x'.repeat(256 * 1024 + 1));
    const codex = (await preview('code-reviewer', { runtime: 'codex', dir })).json();
    expect(codex.files.find((f: { path: string }) => f.path === 'AGENTS.md')).toMatchObject({ current: null, current_too_large: true });
  });

  it('resolves runtime auto to the first installed runtime and says so', async () => {
    const dir = target();
    const saved = host.env.PATH;
    try {
      // Given only the fake claude on PATH
      host.env.PATH = FAKE_BIN;
      const res = await preview('coding-assistant', { dir });
      // Then auto resolves to claude-code
      expect(res.json()).toMatchObject({ runtime: 'claude-code', runtime_source: 'auto' });
      // And with nothing on PATH, auto is a 400 that names the executables looked for
      host.env.PATH = work.path;
      const none = await preview('coding-assistant', { dir });
      expect(none.json()).toMatchObject({ statusCode: 422, code: 'runtime_not_found', message: expect.stringContaining('claude, codex, gemini, opencode') });
    } finally {
      host.env.PATH = saved;
    }
  });

  it('applies, writes a manifest, and a re-apply is idempotent', async () => {
    const dir = target();
    // When applying the documentation writer
    const first = await apply('documentation-writer', { runtime: 'claude-code', dir });
    expect(first.statusCode).toBe(200);
    expect(new Set(Object.values(actions(first.json().files)))).toEqual(new Set(['create']));
    const manifest = JSON.parse(read(dir, '.brainstem/applied-documentation-writer.claude-code.json'));
    expect(Object.keys(manifest.files).sort()).toEqual(['.claude/agents/documentation-writer.md', '.claude/rules/documentation-writer-1.md', '.claude/settings.json', '.mcp.json']);
    expect(manifest.files['.mcp.json']).toMatch(/^[0-9a-f]{64}$/);
    // Then a second apply changes nothing
    const second = await apply('documentation-writer', { runtime: 'claude-code', dir });
    expect(new Set(Object.values(actions(second.json().files)))).toEqual(new Set(['unchanged']));
    expect(read(dir, '.claude/rules/documentation-writer-1.md')).toContain("paths:\n  - '**/*.md'");
    // And no temp file is left behind
    expect(readdirSync(join(dir, '.claude')).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('merges into existing files: keys the user set survive', async () => {
    // Given a settings.json and an AGENTS.md the user wrote
    const dir = target();
    mkdirSync(join(dir, '.claude'));
    writeFileSync(join(dir, '.claude/settings.json'), JSON.stringify({ env: { FOO: '1' }, permissions: { defaultMode: 'default', additionalDirectories: ['../lib'] } }));
    writeFileSync(join(dir, '.mcp.json'), JSON.stringify({ mcpServers: { github: { type: 'http', url: 'https://example.com/mcp' } } }));
    mkdirSync(join(dir, '.codex'));
    writeFileSync(join(dir, '.codex/config.toml'), 'model = "o3"\nnotify = ["say"]\n');
    writeFileSync(join(dir, 'AGENTS.md'), '# Our project\n\nUse pnpm.\n');
    // When applying for claude-code and for codex
    expect((await apply('code-reviewer', { runtime: 'claude-code', dir })).json().files[0]).toEqual({ path: '.claude/settings.json', action: 'update' });
    expect((await apply('code-reviewer', { runtime: 'codex', dir })).statusCode).toBe(200);
    // Then the profile's keys are set and the user's keys are still there
    const settings = JSON.parse(read(dir, '.claude/settings.json'));
    expect(settings.env).toEqual({ FOO: '1' });
    expect(settings.permissions).toMatchObject({ defaultMode: 'plan', additionalDirectories: ['../lib'] });
    expect(Object.keys(JSON.parse(read(dir, '.mcp.json')).mcpServers)).toEqual(['github', 'brainstem']);
    const codex = parseToml(read(dir, '.codex/config.toml'));
    expect(codex).toMatchObject({ model: 'o3', notify: ['say'], sandbox_mode: 'read-only' });
    const agents = read(dir, 'AGENTS.md');
    expect(agents.startsWith('# Our project\n\nUse pnpm.\n\n<!-- brainstem:profile code-reviewer begin -->')).toBe(true);
    // And re-applying replaces the block instead of adding a second one
    await apply('code-reviewer', { runtime: 'codex', dir });
    expect(read(dir, 'AGENTS.md')).toBe(agents);
  });

  it('withdraws on re-apply what the profile no longer grants: a revoked permission, server, hook and model leave the files', async () => {
    // Given a target where the user already has settings of their own
    const dir = target();
    mkdirSync(join(dir, '.claude'));
    writeFileSync(join(dir, '.claude/settings.json'), JSON.stringify({ env: { MINE: '1' }, permissions: { deny: ['Read(.env)'] } }));
    const body = {
      name: 'Wide Then Narrow',
      target_runtime: 'claude-code',
      model: { model: 'opus' },
      permissions: { mode: 'default', allow: ['Bash(*)'], deny: ['Read(.env)'] },
      tools: { mcp_servers: { gh: { type: 'stdio', command: 'gh-mcp' } } },
      hooks: { PreToolUse: [{ type: 'command', command: 'echo pre' }] },
    };
    const id = (await post(API, body)).json().id as string;
    expect((await apply(id, { dir })).statusCode).toBe(200);
    const wide = JSON.parse(read(dir, '.claude/settings.json'));
    expect(wide.permissions.allow).toEqual(['Bash(*)', 'mcp__brainstem']);
    expect(wide.hooks).toBeDefined();
    expect(JSON.parse(read(dir, '.mcp.json')).mcpServers.gh).toBeDefined();
    // When the grants are removed from the profile and it is applied again
    const patched = await t.inject({ method: 'PATCH', url: `${API}/${id}`, payload: { tools: null, hooks: null, model: null, permissions: { mode: 'default', allow: [], deny: ['Read(.env)'] } } });
    expect(patched.statusCode).toBe(200);
    const again = await apply(id, { dir });
    expect(again.statusCode).toBe(200);
    expect(actions(again.json().files)).toMatchObject({ '.claude/settings.json': 'update', '.mcp.json': 'update' });
    // Then they are gone from the files, and the user's own keys are still there
    const narrow = JSON.parse(read(dir, '.claude/settings.json'));
    // (Brainstem's own tools stay allowed: they are not the profile's grant.)
    expect(narrow.permissions.allow).toEqual(['mcp__brainstem']);
    expect(narrow.hooks).toBeUndefined();
    expect(narrow.model).toBeUndefined();
    expect(narrow.env).toEqual({ MINE: '1' });
    expect(narrow.permissions.deny).toEqual(['Read(.env)']);
    expect(Object.keys(JSON.parse(read(dir, '.mcp.json')).mcpServers)).toEqual(['brainstem']);
    // And a third apply changes nothing
    expect(Object.values(actions((await apply(id, { dir })).json().files))).toEqual(['unchanged', 'unchanged', 'unchanged']);
  });

  it('reports a file edited since the last apply as drift and overwrites it only with force', async () => {
    // Given an applied profile whose settings.json the user then edited
    const dir = target();
    await apply('researcher', { runtime: 'claude-code', dir });
    const edited = read(dir, '.claude/settings.json').replace('"plan"', '"acceptEdits"');
    writeFileSync(join(dir, '.claude/settings.json'), edited);
    // When previewing: Then the file is drift
    expect(actions((await preview('researcher', { runtime: 'claude-code', dir })).json().files)['.claude/settings.json']).toBe('drift');
    // When applying without force: Then 409 naming the file, and the edit is kept
    const refused = await apply('researcher', { runtime: 'claude-code', dir });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'apply_drift', details: { files: ['.claude/settings.json'] } });
    expect(read(dir, '.claude/settings.json')).toBe(edited);
    // When applying with force: Then the profile's value is back and the next preview is clean
    const forced = await apply('researcher', { runtime: 'claude-code', dir, force: true });
    expect(actions(forced.json().files)['.claude/settings.json']).toBe('overwritten');
    expect(JSON.parse(read(dir, '.claude/settings.json')).permissions.defaultMode).toBe('plan');
    expect(new Set(Object.values(actions((await preview('researcher', { runtime: 'claude-code', dir })).json().files)))).toEqual(new Set(['unchanged']));
  });

  it('refuses on a first apply to overwrite a whole file it did not write, unless forced; an identical one is unchanged', async () => {
    // Given a target that already holds the user's own agent file under the profile's name, and an opencode agent file
    // identical to what apply writes
    const dir = target();
    mkdirSync(join(dir, '.claude/agents'), { recursive: true });
    writeFileSync(join(dir, '.claude/agents/code-reviewer.md'), 'my own reviewer\n');
    const opencode = (await preview('code-reviewer', { runtime: 'opencode', dir })).json().files.find((f: { path: string }) => f.path.endsWith('.md'));
    mkdirSync(join(dir, '.opencode/agent'), { recursive: true });
    writeFileSync(join(dir, opencode.path), opencode.content);
    // When previewing: Then the agent file is drift, saying Brainstem did not write it
    const shown = (await preview('code-reviewer', { runtime: 'claude-code', dir })).json().files;
    expect(shown.find((f: { path: string }) => f.path === '.claude/agents/code-reviewer.md')).toMatchObject({ action: 'drift', reason: 'not_written_by_brainstem' });
    // When applying without force: Then 409 naming the file, and nothing is written
    const refused = await apply('code-reviewer', { runtime: 'claude-code', dir });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'apply_drift', details: { files: ['.claude/agents/code-reviewer.md'] } });
    expect(refused.json().message).toContain('.claude/agents/code-reviewer.md');
    expect(read(dir, '.claude/agents/code-reviewer.md')).toBe('my own reviewer\n');
    expect(existsSync(join(dir, '.brainstem'))).toBe(false);
    // When forced: Then it is overwritten
    const forced = await apply('code-reviewer', { runtime: 'claude-code', dir, force: true });
    expect(actions(forced.json().files)['.claude/agents/code-reviewer.md']).toBe('overwritten');
    expect(read(dir, '.claude/agents/code-reviewer.md')).toContain('name: code-reviewer');
    // And the identical opencode file is applied as unchanged, without force
    expect(actions((await apply('code-reviewer', { runtime: 'opencode', dir })).json().files)[opencode.path]).toBe('unchanged');
  });

  it('keeps one manifest per runtime: applying for codex does not make a later claude-code apply forget what it wrote', async () => {
    // Given a profile applied for claude-code, then for codex, in the same target
    const dir = target();
    const id = (await post(API, { name: 'Two Runtimes', target_runtime: 'claude-code', permissions: { mode: 'default', allow: ['Bash(npm test)'] } })).json().id as string;
    expect((await apply(id, { dir })).statusCode).toBe(200);
    const codex = await apply(id, { dir, runtime: 'codex' });
    expect(codex.json().manifest).toBe(`.brainstem/applied-${id}.codex.json`);
    expect(readdirSync(join(dir, '.brainstem')).sort()).toEqual([`applied-${id}.claude-code.json`, `applied-${id}.codex.json`]);
    // When the allow rule is removed from the profile and it is applied for claude-code again
    await t.inject({ method: 'PATCH', url: `${API}/${id}`, payload: { permissions: { mode: 'default', allow: [] } } });
    expect((await apply(id, { dir })).statusCode).toBe(200);
    // Then the rule is withdrawn from settings.json
    expect(JSON.parse(read(dir, '.claude/settings.json')).permissions.allow).toEqual(['mcp__brainstem']);
    // When the user then edits a value the profile sets, and codex is applied in between
    writeFileSync(join(dir, '.claude/settings.json'), read(dir, '.claude/settings.json').replace('"default"', '"acceptEdits"'));
    expect((await apply(id, { dir, runtime: 'codex' })).statusCode).toBe(200);
    // Then a claude-code apply still sees the edit as drift and keeps it
    const refused = await apply(id, { dir });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'apply_drift', details: { files: ['.claude/settings.json'], reasons: { '.claude/settings.json': 'edited_since_apply' } } });
    expect(JSON.parse(read(dir, '.claude/settings.json')).permissions.defaultMode).toBe('acceptEdits');
  });

  it('reads a per-profile manifest from before manifests were per runtime as the runtime it records, and replaces it', async () => {
    // Given a claude-code apply whose manifest is in the old single-file layout (it records its runtime)
    const dir = target();
    const id = (await post(API, { name: 'Old Layout', target_runtime: 'claude-code', instructions: { rules: [{ glob: '*', instruction: 'x' }] } })).json().id as string;
    await apply(id, { dir });
    const legacy = join(dir, `.brainstem/applied-${id}.json`);
    writeFileSync(legacy, readFileSync(join(dir, `.brainstem/applied-${id}.claude-code.json`)));
    rmSync(join(dir, `.brainstem/applied-${id}.claude-code.json`));
    // When a codex apply runs: Then it leaves that manifest alone
    await apply(id, { dir, runtime: 'codex' });
    expect(existsSync(legacy)).toBe(true);
    // When the rule is dropped and the profile applied for claude-code
    await t.inject({ method: 'PATCH', url: `${API}/${id}`, payload: { instructions: { rules: [] } } });
    const res = await apply(id, { dir });
    // Then the old manifest vouched for the rule file, which is removed, and the manifest moved to the per-runtime file
    expect(actions(res.json().files)[`.claude/rules/${id}-1.md`]).toBe('remove');
    expect(readdirSync(join(dir, '.brainstem')).sort()).toEqual([`applied-${id}.claude-code.json`, `applied-${id}.codex.json`]);
  });

  it('refuses to merge into a .codex/config.toml holding comments, which the merge would drop, unless forced', async () => {
    // Given a config.toml with the user's comments, and in another target one whose only # is inside a string
    const dir = target();
    mkdirSync(join(dir, '.codex'));
    const commented = '# team defaults\nmodel = "o3" # pinned\n';
    writeFileSync(join(dir, '.codex/config.toml'), commented);
    const plain = target();
    mkdirSync(join(plain, '.codex'));
    writeFileSync(join(plain, '.codex/config.toml'), 'notify = ["say", "#done"]\n');
    // When previewing: Then the file is drift, saying its comments would be lost
    const shown = (await preview('code-reviewer', { runtime: 'codex', dir })).json().files;
    expect(shown.find((f: { path: string }) => f.path === '.codex/config.toml')).toMatchObject({ action: 'drift', reason: 'comments_would_be_lost' });
    // When applying without force: Then 409 naming the file and the comments, and the file is as it was
    const refused = await apply('code-reviewer', { runtime: 'codex', dir });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'apply_drift', details: { files: ['.codex/config.toml'] } });
    expect(refused.json().message).toMatch(/\.codex\/config\.toml \(its comments would be lost\)/);
    expect(read(dir, '.codex/config.toml')).toBe(commented);
    // When forced: Then the merge is written, the user's key kept
    const forced = await apply('code-reviewer', { runtime: 'codex', dir, force: true });
    expect(actions(forced.json().files)['.codex/config.toml']).toBe('overwritten');
    expect(parseToml(read(dir, '.codex/config.toml'))).toMatchObject({ model: 'o3', sandbox_mode: 'read-only' });
    // And a comment added after that stays, since a re-apply that changes no value leaves the file alone
    writeFileSync(join(dir, '.codex/config.toml'), `# mine\n${read(dir, '.codex/config.toml')}`);
    expect(actions((await apply('code-reviewer', { runtime: 'codex', dir })).json().files)['.codex/config.toml']).toBe('unchanged');
    expect(read(dir, '.codex/config.toml').startsWith('# mine\n')).toBe(true);
    // And a # inside a string is no comment: that file is merged without force
    expect(actions((await apply('code-reviewer', { runtime: 'codex', dir: plain })).json().files)['.codex/config.toml']).toBe('update');
  });

  it('keeps the mode of a file it merges into, and refuses one the user made read-only, changing nothing', async () => {
    // Given a private .mcp.json (0600) and, in another target, a read-only settings.json
    const dir = target();
    writeFileSync(join(dir, '.mcp.json'), JSON.stringify({ mcpServers: { mine: { type: 'stdio', command: 'x', env: { T: 'secret' } } } }), { mode: 0o600 });
    chmodSync(join(dir, '.mcp.json'), 0o600);
    const locked = target();
    mkdirSync(join(locked, '.claude'));
    writeFileSync(join(locked, '.claude/settings.json'), '{"env": {"A": "1"}}');
    chmodSync(join(locked, '.claude/settings.json'), 0o444);
    // When applying; Then the merged file is still 0600
    expect((await apply('code-reviewer', { runtime: 'claude-code', dir })).statusCode).toBe(200);
    expect(statSync(join(dir, '.mcp.json')).mode & 0o777).toBe(0o600);
    expect(Object.keys(JSON.parse(read(dir, '.mcp.json')).mcpServers)).toEqual(['mine', 'brainstem']);
    // And the read-only file is refused with 403 naming it, and nothing is written
    const refused = await apply('code-reviewer', { runtime: 'claude-code', dir: locked });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'permission_denied', details: { path: '.claude/settings.json' } });
    expect(read(locked, '.claude/settings.json')).toBe('{"env": {"A": "1"}}');
    expect(statSync(join(locked, '.claude/settings.json')).mode & 0o777).toBe(0o444);
    expect(readdirSync(locked)).toEqual(['.claude']);
    expect(readdirSync(join(locked, '.claude'))).toEqual(['settings.json']);
  });

  it('refuses a symlink that leads outside the target directory, writing nothing', async () => {
    // Given .claude is a symlink to a directory outside the target
    const dir = target();
    const outside = target();
    symlinkSync(outside, join(dir, '.claude'));
    // When applying: Then 400 and nothing is written on either side
    const res = await apply('coding-assistant', { runtime: 'claude-code', dir });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'apply_path_refused' });
    expect(readdirSync(outside)).toEqual([]);
    expect(readdirSync(dir)).toEqual(['.claude']);
  });

  it('refuses a profile that uses the reserved MCP server name, and one with lint errors; preview shows the findings', async () => {
    const dir = target();
    const reserved = await post(API, { name: 'Reserved', tools: { mcp_servers: { brainstem: { type: 'http', url: 'https://x.example/mcp' } } } });
    const bypass = await post(API, { name: 'Bypass', permissions: { mode: 'bypassPermissions' } });
    for (const [res, code] of [[reserved, 'reserved_mcp_server_name'], [bypass, 'bypass_permissions_shared']] as const) {
      const id = res.json().id as string;
      const shown = await preview(id, { runtime: 'claude-code', dir });
      expect(shown.json().errors.map((e: { code: string }) => e.code)).toContain(code);
      const refused = await apply(id, { runtime: 'claude-code', dir });
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toMatchObject({ code: 'profile_has_errors' });
      expect(refused.json().details.errors.map((e: { code: string }) => e.code)).toContain(code);
    }
    expect(readdirSync(dir)).toEqual([]);
    // When the bypassing profile's owner makes it personal; Then it applies, in that mode
    await t.inject({ method: 'PATCH', url: `${API}/${bypass.json().id}`, payload: { scope: 'personal' } });
    expect((await apply(bypass.json().id, { runtime: 'claude-code', dir })).statusCode).toBe(200);
    expect(JSON.parse(read(dir, '.claude/settings.json')).permissions.defaultMode).toBe('bypassPermissions');
  });

  it('answers 4xx for an unknown runtime, a missing or relative dir, an unknown profile, unknown fields', async () => {
    const dir = target();
    expect((await apply('coding-assistant', { runtime: 'vim', dir })).statusCode).toBe(400);
    expect((await preview('coding-assistant', { runtime: 'command', dir })).statusCode).toBe(400);
    const missing = await apply('coding-assistant', { runtime: 'codex', dir: join(dir, 'nope') });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toContain('does not exist');
    expect((await apply('coding-assistant', { runtime: 'codex', dir: 'relative/dir' })).statusCode).toBe(400);
    expect((await apply('coding-assistant', { runtime: 'codex' })).json().message).toContain('dir: required');
    expect((await apply('no-such-profile', { runtime: 'codex', dir })).statusCode).toBe(404);
    expect((await apply('coding-assistant', { runtime: 'codex', dir, overwrite: true })).statusCode).toBe(400);
  });

  it('journals no apply refused for its request (bad dir, missing dir), only applies that reached a target', async () => {
    const dir = target();
    const id = (await post(API, { name: 'Journal Quiet', target_runtime: 'codex' })).json().id as string;
    expect((await apply(id, { dir: 'relative/../x' })).statusCode).toBe(400);
    expect((await apply(id, { dir: join(dir, 'nope') })).statusCode).toBe(400);
    expect((await apply(id, {})).statusCode).toBe(400);
    const applied = async () => (await t.app.get<Journal>(JOURNAL).readStream(`profile-${id}`)).filter((e) => e.type === 'profile.applied');
    expect(await applied()).toEqual([]);
    expect((await apply(id, { dir })).statusCode).toBe(200);
    expect((await applied()).map((e) => e.data)).toEqual([expect.objectContaining({ ok: true, dir })]);
  });

  it('answers 400 naming the path when a target file is a directory, a FIFO, or its parent a file; nothing hangs', async () => {
    // Given targets where .claude/settings.json is a directory, .claude is a file, and .mcp.json is a FIFO
    const asDir = target();
    mkdirSync(join(asDir, '.claude/settings.json'), { recursive: true });
    const asFile = target();
    writeFileSync(join(asFile, '.claude'), 'not a directory');
    const asFifo = target();
    execFileSync('mkfifo', [join(asFifo, '.mcp.json')]);
    for (const [dir, path] of [
      [asDir, '.claude/settings.json'],
      [asFile, '.claude/settings.json'],
      [asFifo, '.mcp.json'],
    ]) {
      // When previewing and applying there; Then a 400 naming the file, and nothing written
      for (const res of [await preview('code-reviewer', { runtime: 'claude-code', dir }), await apply('code-reviewer', { runtime: 'claude-code', dir })]) {
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ code: 'apply_path_refused' });
        expect(res.json().message).toContain(path);
      }
      expect(existsSync(join(dir, '.brainstem'))).toBe(false);
    }
  });

  it('copies local skills for claude-code; a missing skill is an error in preview and apply', async () => {
    // Given a skill directory and a profile naming it by path, and one naming a skill that does not exist
    const dir = target();
    const skill = join(work.path, 'skills/release-notes');
    mkdirSync(join(skill, 'scripts'), { recursive: true });
    writeFileSync(join(skill, 'SKILL.md'), '---\nname: release-notes\ndescription: Writes release notes\n---\nSteps.\n');
    writeFileSync(join(skill, 'scripts/collect.sh'), 'git log --oneline\n');
    const withSkill = (await post(API, { name: 'Skilled', skills: [{ name: 'release-notes', path: skill }, { name: 'remote', source: 'git' }] })).json().id as string;
    const missing = (await post(API, { name: 'Skill Missing', skills: [{ name: 'not-there-anywhere' }] })).json().id as string;
    // When applying the first: Then the skill is copied and named in the agent file; git skills are warned
    const res = await apply(withSkill, { runtime: 'claude-code', dir });
    expect(res.statusCode).toBe(200);
    expect(read(dir, '.claude/skills/release-notes/scripts/collect.sh')).toBe('git log --oneline\n');
    expect(read(dir, `.claude/agents/${withSkill}.md`)).toContain('skills:\n  - release-notes');
    expect(res.json().warnings.map((w: { code: string }) => w.code)).toContain('skill_not_injected');
    // When previewing the second: Then an error; applying it is refused
    expect((await preview(missing, { runtime: 'claude-code', dir })).json().errors[0]).toMatchObject({ path: 'skills[0]', code: 'skill_missing_file' });
    expect((await apply(missing, { runtime: 'claude-code', dir })).statusCode).toBe(422);
  });

  it('finds a skill named without a path in ~/.claude/skills first, then in the project (personal, then project level)', async () => {
    // Given a skill of one name at both levels, and one only in the project
    const dir = target();
    const home = join(work.path, 'home');
    const skill = (root: string, name: string, text: string) => {
      mkdirSync(join(root, '.claude/skills', name), { recursive: true });
      writeFileSync(join(root, '.claude/skills', name, 'SKILL.md'), text);
    };
    skill(home, 'both', 'personal\n');
    skill(dir, 'both', 'project\n');
    skill(dir, 'project-only', 'project only\n');
    const id = (await post(API, { name: 'Skill Levels', target_runtime: 'claude-code', skills: [{ name: 'both' }, { name: 'project-only' }] })).json().id as string;
    const saved = host.home;
    host.home = home;
    try {
      // When previewing; Then the personal skill wins, which would overwrite the project's own copy (so it is drift)
      const files = (await preview(id, { dir })).json().files as Array<{ path: string; content: string; action: string; reason?: string }>;
      expect(files.find((f) => f.path === '.claude/skills/both/SKILL.md')).toMatchObject({ content: 'personal\n', action: 'drift', reason: 'not_written_by_brainstem' });
      expect(files.find((f) => f.path === '.claude/skills/project-only/SKILL.md')).toMatchObject({ content: 'project only\n', action: 'unchanged' });
      // When the personal one is gone; Then the project's is used
      rmSync(join(home, '.claude/skills/both'), { recursive: true });
      const again = (await preview(id, { dir })).json().files as Array<{ path: string; content: string; action: string }>;
      expect(again.find((f) => f.path === '.claude/skills/both/SKILL.md')).toMatchObject({ content: 'project\n', action: 'unchanged' });
    } finally {
      host.home = saved;
    }
  });

  it('removes on re-apply the whole files the profile no longer emits (a dropped skill, a dropped path rule) unless edited since', async () => {
    // Given a profile with two skills and two path rules, applied to a target that already has a skill of the user's
    const dir = target();
    const skills = join(work.path, `skills-${n}`);
    for (const name of ['drop-me', 'edit-me']) {
      mkdirSync(join(skills, name, 'scripts'), { recursive: true });
      writeFileSync(join(skills, name, 'SKILL.md'), `---\nname: ${name}\ndescription: d\n---\n`);
      writeFileSync(join(skills, name, 'scripts/run.sh'), 'echo run\n');
    }
    mkdirSync(join(dir, '.claude/skills/users-own'), { recursive: true });
    writeFileSync(join(dir, '.claude/skills/users-own/SKILL.md'), 'mine\n');
    const id = (
      await post(API, {
        name: 'Skills Then None',
        target_runtime: 'claude-code',
        skills: [{ name: 'drop-me', path: join(skills, 'drop-me') }, { name: 'edit-me', path: join(skills, 'edit-me') }],
        instructions: { rules: [{ glob: '*.ts', instruction: 'one' }, { glob: '*.md', instruction: 'two' }] },
      })
    ).json().id as string;
    expect((await apply(id, { dir })).statusCode).toBe(200);
    expect(existsSync(join(dir, '.claude/skills/drop-me/scripts/run.sh'))).toBe(true);
    // And the user edits one copied skill file
    writeFileSync(join(dir, '.claude/skills/edit-me/SKILL.md'), 'edited by the user\n');
    // When the skills and the second rule are removed from the profile
    const patched = await t.inject({ method: 'PATCH', url: `${API}/${id}`, payload: { skills: [], instructions: { rules: [{ glob: '*.ts', instruction: 'one' }] } } });
    expect(patched.statusCode).toBe(200);
    // Then preview shows what goes and what stays, writing nothing
    const shown = actions((await preview(id, { dir })).json().files);
    expect(shown).toMatchObject({ '.claude/skills/drop-me/SKILL.md': 'remove', '.claude/skills/edit-me/SKILL.md': 'kept', [`.claude/rules/${id}-2.md`]: 'remove' });
    expect(existsSync(join(dir, '.claude/skills/drop-me/SKILL.md'))).toBe(true);
    // When applying again
    const again = await apply(id, { dir });
    expect(again.statusCode).toBe(200);
    // Then the unchanged files are removed, with the directories Brainstem made for them; the edited one is kept and reported
    expect(actions(again.json().files)).toMatchObject({
      '.claude/skills/drop-me/SKILL.md': 'remove',
      '.claude/skills/drop-me/scripts/run.sh': 'remove',
      '.claude/skills/edit-me/SKILL.md': 'kept',
      '.claude/skills/edit-me/scripts/run.sh': 'remove',
      [`.claude/rules/${id}-2.md`]: 'remove',
    });
    expect(existsSync(join(dir, '.claude/skills/drop-me'))).toBe(false);
    expect(readdirSync(join(dir, '.claude/skills')).sort()).toEqual(['edit-me', 'users-own']);
    expect(readdirSync(join(dir, '.claude/skills/edit-me'))).toEqual(['SKILL.md']);
    expect(read(dir, '.claude/skills/edit-me/SKILL.md')).toBe('edited by the user\n');
    expect(read(dir, '.claude/skills/users-own/SKILL.md')).toBe('mine\n');
    expect(readdirSync(join(dir, '.claude/rules'))).toEqual([`${id}-1.md`]);
    expect(read(dir, `.claude/agents/${id}.md`)).not.toContain('drop-me');
    // And the manifest no longer records them: the next apply changes nothing and reports nothing removed
    const third = actions((await apply(id, { dir })).json().files);
    expect(new Set(Object.values(third))).toEqual(new Set(['unchanged']));
  });

  it('never removes a whole file it found already there, nor one from a manifest that did not record what it wrote', async () => {
    // Given a project skill the profile resolves from the target itself (the copy onto itself changes nothing)
    const dir = target();
    mkdirSync(join(dir, '.claude/skills/in-repo'), { recursive: true });
    writeFileSync(join(dir, '.claude/skills/in-repo/SKILL.md'), 'the repo skill\n');
    const id = (await post(API, { name: 'Repo Skill', target_runtime: 'claude-code', skills: [{ name: 'in-repo' }] })).json().id as string;
    expect(actions((await apply(id, { dir })).json().files)['.claude/skills/in-repo/SKILL.md']).toBe('unchanged');
    // When the skill is dropped and the profile applied again; Then the repo's file stays (kept, not Brainstem's)
    await t.inject({ method: 'PATCH', url: `${API}/${id}`, payload: { skills: [] } });
    expect(actions((await apply(id, { dir })).json().files)['.claude/skills/in-repo/SKILL.md']).toBe('kept');
    expect(read(dir, '.claude/skills/in-repo/SKILL.md')).toBe('the repo skill\n');
    // Given a manifest written before ownership was recorded, listing a rule file the profile no longer emits
    const old = target();
    const legacy = (await post(API, { name: 'Legacy Manifest', target_runtime: 'claude-code', instructions: { rules: [{ glob: '*', instruction: 'x' }] } })).json().id as string;
    await apply(legacy, { dir: old });
    const manifestFile = join(old, `.brainstem/applied-${legacy}.claude-code.json`);
    const { owned: _owned, dirs: _dirs, ...before } = JSON.parse(readFileSync(manifestFile, 'utf8'));
    writeFileSync(manifestFile, JSON.stringify(before));
    await t.inject({ method: 'PATCH', url: `${API}/${legacy}`, payload: { instructions: { rules: [] } } });
    // When re-applied; Then the file is kept and reported, since that manifest cannot tell whose it is
    const res = await apply(legacy, { dir: old });
    expect(res.statusCode).toBe(200);
    expect(actions(res.json().files)[`.claude/rules/${legacy}-1.md`]).toBe('kept');
    expect(existsSync(join(old, `.claude/rules/${legacy}-1.md`))).toBe(true);
  });

  it('applies a profile saved with auto_apply_dir there, and journals the result', async () => {
    // Given a directory; When a profile is created with auto_apply_dir pointing at it
    const dir = target();
    const created = await post(API, { name: 'Auto Applied', target_runtime: 'opencode', auto_apply_dir: dir });
    expect(created.statusCode).toBe(201);
    expect(created.json().warnings).toEqual([]);
    const id = created.json().id as string;
    // Then its files are there
    expect(JSON.parse(read(dir, 'opencode.json')).default_agent).toBe(id);
    expect(existsSync(join(dir, `.opencode/agent/${id}.md`))).toBe(true);
    // And the journal has the apply, with what it did
    const events = await t.app.get<Journal>(JOURNAL).readStream(`profile-${id}`);
    const applied = events.find((e) => e.type === 'profile.applied');
    expect(applied?.data).toMatchObject({ id, trigger: 'auto_apply', dir, runtime: 'opencode', ok: true, error: null });
    // And a save that cannot apply (dir removed) still saves, says why in its answer, and journals the failure
    const gone = join(dir, 'gone');
    const updated = await t.inject({ method: 'PATCH', url: `${API}/${id}`, payload: { auto_apply_dir: gone } });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ id, auto_apply_dir: gone });
    const error = `dir: ${gone} does not exist`;
    expect(updated.json().warnings).toEqual([{ path: 'auto_apply_dir', code: 'auto_apply_failed', message: `the profile was saved, but applying it to ${gone} failed: ${error}` }]);
    const last = (await t.app.get<Journal>(JOURNAL).readStream(`profile-${id}`)).filter((e) => e.type === 'profile.applied').pop();
    expect(last?.data).toMatchObject({ ok: false, trigger: 'auto_apply', dir: gone, error });
  });

  it('creates a profile whose auto-apply is refused, and answers 201 with the refusal as a warning', async () => {
    // Given a directory holding a file Brainstem did not write, where apply would write the profile's agent
    const dir = target();
    const agent = '.opencode/agent/auto-refused.md';
    mkdirSync(join(dir, '.opencode/agent'), { recursive: true });
    writeFileSync(join(dir, agent), 'my own agent\n');
    // When a profile is created to auto-apply there
    const created = await post(API, { name: 'Auto Refused', target_runtime: 'opencode', auto_apply_dir: dir });
    // Then it is saved, the answer says the apply was refused and why, the journal too, and the file is untouched
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;
    const error = `applying would lose changes in ${agent} (already there and not written by Brainstem); apply with force: true to overwrite`;
    expect(created.json().warnings).toEqual([{ path: 'auto_apply_dir', code: 'auto_apply_failed', message: `the profile was saved, but applying it to ${dir} failed: ${error}` }]);
    const events = await t.app.get<Journal>(JOURNAL).readStream(`profile-${id}`);
    expect(events.map((e) => [e.type, (e.data as { error?: string }).error ?? null])).toEqual([
      ['profile.created', null],
      ['profile.applied', error],
    ]);
    expect(read(dir, agent)).toBe('my own agent\n');
    // And a save of a profile without auto_apply_dir has nothing to warn about
    expect((await t.inject({ method: 'PATCH', url: `${API}/${id}`, payload: { auto_apply_dir: '' } })).json().warnings).toEqual([]);
  });

  it('drops auto_apply_dir on import, so an imported file writes nothing into a project', async () => {
    // Given an exported profile with hooks and an auto_apply_dir naming a directory here
    const dir = target();
    const yaml = `name: Imported Auto\nversion: 2\nruntime: claude-code\nauto_apply_dir: ${dir}\nhooks:\n  SessionStart: [{type: command, command: ./setup.sh}]\n`;
    // When it is imported
    const res = await t.inject({ method: 'POST', url: `${API}/import`, headers: { 'content-type': 'application/yaml' }, payload: yaml });
    // Then the profile is there without the directory, a warning says so, and nothing was written or journaled as applied
    expect(res.statusCode).toBe(201);
    const { profile, warnings } = res.json();
    expect(profile.auto_apply_dir).toBe('');
    expect(warnings).toContainEqual({ path: 'auto_apply_dir', code: 'auto_apply_dir_dropped', message: 'auto_apply_dir is not imported; edit the profile to set one' });
    expect(readdirSync(dir)).toEqual([]);
    const events = await t.app.get<Journal>(JOURNAL).readStream(`profile-${profile.id}`);
    expect(events.map((e) => e.type)).toEqual(['profile.imported']);
  });
});
