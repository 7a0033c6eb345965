import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';

const API = '/api/v1/agent-profiles';

describe('Agent Profiles refuse what they could not read back (HTTP, real profiles dir)', () => {
  const root = tempDir('brainstem-profiles-bad-');
  const dir = join(root.path, 'profiles');
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ BRAINSTEM_PROFILES_DIR: dir });
  });
  afterAll(async () => {
    await t.close();
    root.remove();
  });

  const post = (url: string, payload: object | string, contentType = 'application/json') =>
    t.inject({ method: 'POST', url, headers: { 'content-type': contentType }, payload });
  const listed = async () => (await t.inject({ method: 'GET', url: API })).json().profiles as Array<{ id: string; name: string | null; error: string | null }>;

  it('refuses a JSON body nested deeper than 64 levels with 400, and takes a shallower one', async () => {
    const nested = (levels: number) => '['.repeat(levels - 1) + '{}' + ']'.repeat(levels - 1);
    const deep = await post(API, `{"name":"deep","model":{"options":{"x":${nested(5000)}}}}`);
    expect(deep.statusCode).toBe(400);
    expect(deep.json()).toMatchObject({ code: 'invalid_input', message: 'the JSON body nests deeper than 64 levels' });
    expect((await post(API, `{"name":"nested","model":{"options":{"x":${nested(20)}}}}`)).statusCode).toBe(201);
  });

  it('refuses a profile whose file would be over the 256 KiB the reader takes, writing nothing', async () => {
    const before = readdirSync(dir);
    // Each field is within its own limit (128 KiB); together they are not.
    const big = 'p'.repeat(100_000);
    const rules = [{ glob: '**/*.md', instruction: big }, { glob: '**/*.ts', instruction: big }];
    const res = await post(API, { name: 'Too Big', instructions: { system_prompt: big, rules } });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/cannot be saved.*over the limit of 256 KiB/);
    expect(readdirSync(dir)).toEqual(before);
  });

  it('keeps the names of copies and renamed imports within 200 characters', async () => {
    const name = 'N'.repeat(200);
    const id = (await post(API, { name })).json().id as string;
    const copy = await post(`${API}/${id}/duplicate`, {});
    expect(copy.statusCode).toBe(201);
    expect(copy.json().name).toBe(`${'N'.repeat(193)} (copy)`);
    const imported = await post(`${API}/import`, { yaml: `name: ${name}\n` });
    expect(imported.statusCode).toBe(201);
    expect(imported.json().profile.name).toBe(`${'N'.repeat(196)} (2)`);
    // Then all three read back as valid profiles
    const mine = (await listed()).filter((p) => p.name?.startsWith('NNN'));
    expect(mine.map((p) => p.error)).toEqual([null, null, null]);
  });

  it.each([
    ['a skill name that is a path', { name: 'Skill Path', skills: [{ name: '../../.git/hooks', path: '/tmp' }] }, 'skills[0].name: must be a plain name'],
    ['a name with NUL', { name: 'a\u0000b' }, 'name: must not contain control characters'],
    ['a relative auto_apply_dir', { name: 'Rel', auto_apply_dir: 'some/dir' }, 'auto_apply_dir: must be an absolute path'],
    ['an object where a list belongs', { name: 'Obj', permissions: { allow: { a: 1 } } }, 'permissions.allow: must be an array'],
  ])('refuses %s with 400 naming the field', async (_what, body, named) => {
    const res = await post(API, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain(named);
  });

  it('answers 4xx, not 500, for ids that are not ids', async () => {
    for (const id of ['Abc', '..%2F..%2Fetc', '__proto__', 'x'.repeat(100)]) {
      for (const method of ['GET', 'DELETE'] as const) {
        const res = await t.inject({ method, url: `${API}/${id}` });
        expect(res.statusCode).toBe(400);
        expect(res.json().code).toBe('invalid_input');
      }
    }
  });

  it('lists a FIFO or a directory named like a profile as malformed, without hanging', async () => {
    mkdirSync(dir, { recursive: true });
    execFileSync('mkfifo', [join(dir, 'a-fifo.yaml')]);
    mkdirSync(join(dir, 'a-dir.yaml'));
    const odd = (await listed()).filter((p) => p.id === 'a-fifo' || p.id === 'a-dir');
    expect(odd).toEqual([expect.objectContaining({ id: 'a-dir', error: 'not a regular file' }), expect.objectContaining({ id: 'a-fifo', error: 'not a regular file' })]);
    expect((await t.inject({ method: 'GET', url: `${API}/a-fifo` })).json()).toMatchObject({ error: 'not a regular file' });
  });
});

describe('Agent Profiles with a state file naming a bad id', () => {
  const root = tempDir('brainstem-profiles-state-id-');
  let t: TestApp;
  afterAll(async () => {
    await t.close();
    root.remove();
  });

  it('sets the file aside and answers from the rebuilt state', async () => {
    mkdirSync(root.path, { recursive: true });
    writeFileSync(join(root.path, '.brainstem-profiles.json'), JSON.stringify({ default_profile_id: '../evil', project_bindings: {}, profiles: {} }));
    t = await startTestApp({ BRAINSTEM_PROFILES_DIR: root.path });
    const res = await t.inject({ method: 'GET', url: API });
    expect(res.statusCode).toBe(200);
    expect(res.json().default_profile_id).not.toBe('../evil');
    expect(readdirSync(root.path).some((f) => f.startsWith('.brainstem-profiles.json.damaged-'))).toBe(true);
  });
});
