import { existsSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { Journal, JournalEvent } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { FsProfileStore } from '../../src/profiles/profile.store';
import { ProfilesService } from '../../src/profiles/profiles.service';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';

const API = '/api/v1/agent-profiles';

/** Every `.yaml` file of the directory with its text. */
function yamlFiles(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).filter((f) => f.endsWith('.yaml')).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

describe('Agent Profiles through the journal (real LevelDB, real profiles directory)', () => {
  let root: ReturnType<typeof tempDir>;
  let env: Record<string, string>;
  let dir: string;
  let t: TestApp | null = null;

  beforeEach(() => {
    root = tempDir('brainstem-profiles-journal-');
    dir = join(root.path, 'profiles');
    env = { BRAINSTEM_JOURNAL_DIR: join(root.path, 'journal'), BRAINSTEM_PROFILES_DIR: dir };
  });
  afterEach(async () => {
    await t?.close();
    t = null;
    root.remove();
  });

  const restart = async (): Promise<TestApp> => {
    await t?.close();
    t = await startTestApp(env);
    return t;
  };
  const app = (): TestApp => {
    if (!t) throw new Error('no app running');
    return t;
  };
  const get = (url: string) => app().inject({ method: 'GET', url });
  const post = (url: string, payload?: object) => app().inject({ method: 'POST', url, ...(payload ? { payload } : {}) });
  const patch = (url: string, payload: object) => app().inject({ method: 'PATCH', url, payload });
  const profileEvents = async (): Promise<JournalEvent[]> =>
    (await app().app.get<Journal>(JOURNAL).readAll(0, 100_000)).filter((e) => e.type.startsWith('profile.'));

  it('journals a change before writing its file: a change the journal refuses leaves no file, and no changed file', async () => {
    // Given the service on a real journal, with one profile saved
    const journal = await openLevelJournal(join(root.path, 'journal'));
    const profiles = new ProfilesService(new FsProfileStore(dir), journal, () => new Date(), { home: homedir() });
    await profiles.onModuleInit();
    await profiles.create({ name: 'Kept', description: 'first' });
    const kept = readFileSync(join(dir, 'kept.yaml'), 'utf8');
    // When the journal refuses appends (it is closed)
    await journal.close();
    // Then a create fails and writes no file, and an update fails and leaves the file as it was
    await expect(profiles.create({ name: 'Refused' })).rejects.toMatchObject({ code: 'journal_closed' });
    expect(existsSync(join(dir, 'refused.yaml'))).toBe(false);
    await expect(profiles.update('kept', { description: 'second' })).rejects.toMatchObject({ code: 'journal_closed' });
    expect(readFileSync(join(dir, 'kept.yaml'), 'utf8')).toBe(kept);
    // And a delete fails and keeps the file
    await expect(profiles.remove('kept')).rejects.toMatchObject({ code: 'journal_closed' });
    expect(existsSync(join(dir, 'kept.yaml'))).toBe(true);
  });

  it('rebuilds identical files, default, bindings and metadata from the journal when the profiles directory is deleted', async () => {
    // Given profiles made every way there is, one of them edited by hand with a comment
    await restart();
    const servers = { zeta: { type: 'stdio', command: 'z' }, alpha: { type: 'stdio', command: 'a' } };
    expect((await post(API, { name: 'Alpha', tools: { mcp_servers: servers }, scope: 'personal' })).statusCode).toBe(201);
    expect((await patch(`${API}/alpha`, { description: 'changed', model: { model: 'm1', provider: 'p', fallback: ['f'] } })).statusCode).toBe(200);
    expect((await post(`${API}/alpha/duplicate`, {})).statusCode).toBe(201);
    expect((await post(`${API}/import`, { yaml: 'name: Imported\ndescription: from elsewhere\n' })).statusCode).toBe(201);
    expect((await post(API, { name: 'Gone' })).statusCode).toBe(201);
    expect((await app().inject({ method: 'DELETE', url: `${API}/gone` })).statusCode).toBe(204);
    expect((await post(API, { name: 'By Hand' })).statusCode).toBe(201);
    writeFileSync(join(dir, 'by-hand.yaml'), '# kept by the journal\nversion: 1\nname: By Hand\ndescription: edited\n');
    expect((await get(`${API}/by-hand`)).json().description).toBe('edited');
    expect((await post(`${API}/alpha-copy/set-default`)).statusCode).toBe(200);
    expect((await post(`${API}/project-binding`, { project_dir: '/work/app', profile_id: 'imported' })).statusCode).toBe(200);
    const files = yamlFiles(dir);
    const list = (await get(API)).json();
    const bindings = (await get(`${API}/project-binding`)).json();
    expect(Object.keys(files).sort()).toEqual(['alpha-copy.yaml', 'alpha.yaml', 'by-hand.yaml', 'imported.yaml']);

    // When the directory is deleted and the service restarts
    await app().close();
    t = null;
    rmSync(dir, { recursive: true });
    await restart();

    // Then the same files are back, byte for byte, and the API answers as before
    expect(yamlFiles(dir)).toEqual(files);
    expect((await get(API)).json()).toEqual(list);
    expect((await get(`${API}/project-binding`)).json()).toEqual(bindings);
    // And the rebuild itself is no edit: the only edit the journal holds is the one made by hand
    const edits = (await profileEvents()).filter((e) => e.type === 'profile.edited_on_disk');
    expect(edits.map((e) => (e.data as { id: string }).id)).toEqual(['by-hand']);

    // And a plain restart changes nothing and journals nothing
    const count = (await profileEvents()).length;
    await restart();
    expect(yamlFiles(dir)).toEqual(files);
    expect(await profileEvents()).toHaveLength(count);
  });

  it("journals a hand edit as profile.edited_on_disk with the file's text, and the API shows its document", async () => {
    // Given a profile saved through the API
    await restart();
    await post(API, { name: 'Edited', description: 'before' });
    // When its file is edited by hand
    const text = '# my notes\nversion: 1\nname: Edited\ndescription: after\nmodel:\n  model: m2\n';
    writeFileSync(join(dir, 'edited.yaml'), text);
    // Then the API shows the edit
    expect((await get(`${API}/edited`)).json()).toMatchObject({ description: 'after', model: { model: 'm2' }, error: null });
    // And the journal holds it, once, with the file's text (the document shown is that text parsed)
    const stream = await app().app.get<Journal>(JOURNAL).readStream('profile-edited');
    expect(stream.map((e) => e.type)).toEqual(['profile.created', 'profile.edited_on_disk']);
    expect(stream[1].data).toEqual({ id: 'edited', text, error: null, at: expect.any(String) });
    await get(API);
    expect(await app().app.get<Journal>(JOURNAL).readStream('profile-edited')).toHaveLength(2);
    // And an update through the API builds on the edit
    expect((await patch(`${API}/edited`, { icon: 'star' })).json()).toMatchObject({ description: 'after', icon: 'star', model: { model: 'm2' } });
  });

  it('reports a malformed hand edit without failing, journals it with its error, and restores that very file after a restart', async () => {
    // Given a profile saved through the API
    await restart();
    await post(API, { name: 'Fragile' });
    // When its file is replaced by text that is not YAML
    const broken = 'name: [unclosed\n';
    writeFileSync(join(dir, 'fragile.yaml'), broken);
    // Then the listing and the profile answer, showing the error
    const list = await get(API);
    expect(list.statusCode).toBe(200);
    expect(list.json().profiles.find((p: { id: string }) => p.id === 'fragile')).toMatchObject({ name: null, error: expect.stringContaining('invalid YAML') });
    expect((await get(`${API}/fragile`)).json()).toMatchObject({ id: 'fragile', error: expect.stringContaining('invalid YAML') });
    // And the journal holds the edit with its text and its error
    const edit = (await profileEvents()).find((e) => e.type === 'profile.edited_on_disk');
    expect(edit?.data).toEqual({ id: 'fragile', text: broken, error: expect.stringContaining('invalid YAML'), at: expect.any(String) });
    // And the journal's version of the file is the edited one: a restart without the file puts it back as it was
    rmSync(join(dir, 'fragile.yaml'));
    await restart();
    expect(readFileSync(join(dir, 'fragile.yaml'), 'utf8')).toBe(broken);
    // And fixing the file is another edit, which the API shows
    writeFileSync(join(dir, 'fragile.yaml'), 'name: Fragile\ndescription: fixed\n');
    expect((await get(`${API}/fragile`)).json()).toMatchObject({ description: 'fixed', error: null });
    expect((await profileEvents()).filter((e) => e.type === 'profile.edited_on_disk')).toHaveLength(2);
  });

  it('at start, rewrites a file still holding its own last write when the journal moved on, and keeps one edited since', async () => {
    // Given two profiles saved through the API, then the service stopped
    await restart();
    await post(API, { name: 'Stale', description: 'old' });
    await post(API, { name: 'Touched', description: 'old' });
    await app().close();
    t = null;
    // And changes journaled for both that never reached their files (a crash between the append and the write)
    const journal = await openLevelJournal(join(root.path, 'journal'));
    const later = (id: string) => ({ type: 'profile.updated', data: { id, fields: ['description'], at: new Date().toISOString(), text: `version: 1\nname: ${id}\ndescription: new\n` } });
    await journal.append('profile-stale', [later('stale')]);
    await journal.append('profile-touched', [later('touched')]);
    await journal.close();
    // And one of the files edited by hand meanwhile
    const touched = 'version: 1\nname: Touched\ndescription: by hand\n';
    writeFileSync(join(dir, 'touched.yaml'), touched);
    // A minute on, so that a coarse file-time resolution cannot make the edit look like the service's own write.
    const edited = new Date(Date.now() + 60_000);
    utimesSync(join(dir, 'touched.yaml'), edited, edited);
    // When the service starts
    await restart();
    // Then the file that still held the service's own write is written from the journal
    expect(readFileSync(join(dir, 'stale.yaml'), 'utf8')).toBe('version: 1\nname: stale\ndescription: new\n');
    // And the edited one is kept and journaled as a hand edit
    expect(readFileSync(join(dir, 'touched.yaml'), 'utf8')).toBe(touched);
    expect((await get(`${API}/touched`)).json().description).toBe('by hand');
    const stream = await app().app.get<Journal>(JOURNAL).readStream('profile-touched');
    expect(stream.map((e) => e.type)).toEqual(['profile.created', 'profile.updated', 'profile.edited_on_disk']);
    expect(await app().app.get<Journal>(JOURNAL).readStream('profile-stale')).toHaveLength(2);
  });
});
