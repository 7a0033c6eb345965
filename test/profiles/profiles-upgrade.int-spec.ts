import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { EventJournal } from '../../src/journal/event-journal';
import { FsProfileStore } from '../../src/profiles/profile.store';
import { ProfilesService } from '../../src/profiles/profiles.service';
import { tempDir } from '../support/temp-dir';

/** A journal and a profiles directory as versions before the index wrote them, read by this one (real LevelDB, real files). */
describe('Agent Profiles from a journal and a directory written before profile streams were registered', () => {
  let root: ReturnType<typeof tempDir>;
  let dir: string;
  let journal: EventJournal | null = null;
  const service = (j: EventJournal) => new ProfilesService(new FsProfileStore(dir), j, () => new Date(), { home: homedir() });
  const profileEvents = async (j: EventJournal) => (await j.readAll(0, 10_000)).filter((e) => e.type.startsWith('profile.'));

  beforeEach(() => {
    root = tempDir('brainstem-profiles-upgrade-');
    dir = join(root.path, 'profiles');
    mkdirSync(dir);
  });
  afterEach(async () => {
    await journal?.close();
    journal = null;
    root.remove();
  });

  it('Given old events (no documents, no index) and a state file without a format, Then profiles, default and bindings load as they were, the streams are registered once, and a restart journals nothing', async () => {
    // Given the journal an older version wrote: events without documents; a profile made the default, bound, then deleted
    journal = await openLevelJournal(join(root.path, 'journal'));
    await journal.append('profile-old', [{ type: 'profile.created', data: { id: 'old', name: 'Old', source: 'user' } }]);
    await journal.append('profile-gone', [{ type: 'profile.created', data: { id: 'gone', name: 'Gone', source: 'user' } }]);
    await journal.append('profile-researcher', [{ type: 'profile.default_set', data: { id: 'researcher', previous: 'coding-assistant' } }]);
    await journal.append('profile-gone', [{ type: 'profile.default_set', data: { id: 'gone', previous: 'researcher' } }]);
    await journal.append('profiles', [
      { type: 'profile.project_bound', data: { project_dir: '/w/old', profile_id: 'old' } },
      { type: 'profile.project_bound', data: { project_dir: '/w/gone', profile_id: 'gone' } },
    ]);
    await journal.append('profile-gone', [{ type: 'profile.deleted', data: { id: 'gone' } }]);
    // And the directory it kept: the profile's file and a state file without a format
    const text = 'version: 1\nname: Old\ndescription: kept on disk\n';
    writeFileSync(join(dir, 'old.yaml'), text);
    const written = new Date('2026-01-02T03:04:05.000Z');
    utimesSync(join(dir, 'old.yaml'), written, written);
    const meta = { created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-02T03:04:05.000Z', source: 'user', locked: false, owner_pack_id: null, file_mtime_ms: written.getTime() };
    writeFileSync(join(dir, '.brainstem-profiles.json'), JSON.stringify({ default_profile_id: null, project_bindings: { '/w/old': 'old' }, profiles: { old: meta } }));

    // When this version starts on them
    const profiles = service(journal);
    await profiles.onModuleInit();

    // Then the profile reads as its file says, the deleted default and its binding stay gone, the other binding holds
    const list = await profiles.list();
    expect(list.default_profile_id).toBe('coding-assistant');
    expect(list.profiles.find((p) => p.id === 'old')).toMatchObject({ name: 'Old', description: 'kept on disk', error: null });
    expect(await profiles.bindings()).toEqual({ bindings: [{ project_dir: '/w/old', profile_id: 'old' }] });
    expect(readFileSync(join(dir, 'old.yaml'), 'utf8')).toBe(text);
    // And the journal took the file up (it had no text of it) and registered both old streams, once
    const events = await profileEvents(journal);
    expect(events.filter((e) => e.type === 'profile.edited_on_disk').map((e) => e.data)).toEqual([expect.objectContaining({ id: 'old', text })]);
    const registered = events.filter((e) => e.type === 'profile.registered').flatMap((e) => (e.data as { ids: string[] }).ids);
    expect(registered.sort()).toEqual(['gone', 'old']);
    expect(JSON.parse(readFileSync(join(dir, '.brainstem-profiles.json'), 'utf8'))).toMatchObject({ format: 2, project_bindings: { '/w/old': 'old' } });

    // And a restart reads the index, finds the same, and journals nothing
    const count = events.length;
    await profiles.onModuleDestroy();
    const again = service(journal);
    expect(await again.list()).toEqual(list);
    expect(await profileEvents(journal)).toHaveLength(count);
  });

  it('Given hand edits journaled with their document (as edits were before), Then they load as their text says, a restart journals nothing, and their files are written back from the text', async () => {
    // Given the journal an older version wrote: a valid edit and a malformed one, each with the document it carried then
    journal = await openLevelJournal(join(root.path, 'journal'));
    const mine = '# by hand\nname: Mine\ndescription: from the text\n';
    const broken = 'name: [unclosed\n';
    const at = '2026-11-20T10:00:00.000Z';
    await journal.appendAll([
      { stream: 'profile-mine', events: [{ type: 'profile.edited_on_disk', data: { id: 'mine', text: mine, doc: { name: 'Mine', description: 'from the text' }, error: null, at } }] },
      { stream: 'profile-broken', events: [{ type: 'profile.edited_on_disk', data: { id: 'broken', text: broken, doc: null, error: 'invalid YAML: x', at } }] },
      { stream: 'profiles', events: [{ type: 'profile.registered', data: { ids: ['mine', 'broken'] } }] },
    ]);
    // And their files as the journal holds them
    writeFileSync(join(dir, 'mine.yaml'), mine);
    writeFileSync(join(dir, 'broken.yaml'), broken);
    const count = (await profileEvents(journal)).length;

    // When this version starts on them
    const profiles = service(journal);
    const list = await profiles.list();

    // Then each reads as its text says, and nothing is journaled
    const user = list.profiles.filter((p) => p.source === 'user');
    expect(user.map((p) => [p.id, p.error ?? p.description, p.updated_at])).toEqual([
      ['broken', 'invalid YAML: x', at],
      ['mine', 'from the text', at],
    ]);
    expect(await profileEvents(journal)).toHaveLength(count);
    // And without their files, a restart writes them back from the text and lists the same
    await profiles.onModuleDestroy();
    rmSync(join(dir, 'mine.yaml'));
    rmSync(join(dir, 'broken.yaml'));
    expect(await service(journal).list()).toEqual(list);
    expect(readFileSync(join(dir, 'mine.yaml'), 'utf8')).toBe(mine);
    expect(readFileSync(join(dir, 'broken.yaml'), 'utf8')).toBe(broken);
    expect(await profileEvents(journal)).toHaveLength(count);
  });

  it('Given a snapshot taken at a stop and changes journaled after it, Then boot reads both, and writes the files the changes make', async () => {
    // Given two profiles saved, then a graceful stop (it snapshots the catalogue)
    journal = await openLevelJournal(join(root.path, 'journal'));
    const first = service(journal);
    await first.create({ name: 'Kept' });
    await first.create({ name: 'Moved On', description: 'before' });
    await first.onModuleDestroy();
    expect(await journal.loadSnapshot('profiles')).not.toBeNull();
    const snapshotHead = journal.head().seq;
    // And, after it, what another writer journaled: an update, and a new profile registered with its first event
    await journal.append('profile-moved-on', [{ type: 'profile.updated', data: { id: 'moved-on', fields: ['description'], text: 'version: 1\nname: Moved On\ndescription: after\n' } }]);
    await journal.appendAll([
      { stream: 'profile-new-one', events: [{ type: 'profile.created', data: { id: 'new-one', name: 'New One', source: 'user', text: 'version: 1\nname: New One\n' } }] },
      { stream: 'profiles', events: [{ type: 'profile.registered', data: { ids: ['new-one'] } }] },
    ]);

    // When the service starts again (what it reads noted)
    const read: string[] = [];
    const readStream = journal.readStream.bind(journal);
    journal.readStream = (stream, ...rest) => {
      read.push(stream);
      return readStream(stream, ...rest);
    };
    const readFrom: number[] = [];
    const readAll = journal.readAll.bind(journal);
    journal.readAll = (after, limit) => {
      readFrom.push(after ?? 0);
      return readAll(after, limit);
    };
    const list = await service(journal).list();

    // Then it holds all three, and their files are the journal's
    expect(list.profiles.filter((p) => p.source === 'user').map((p) => [p.id, p.error === null ? p.description : p.error])).toEqual([
      ['kept', ''],
      ['moved-on', 'after'],
      ['new-one', ''],
    ]);
    expect(readFileSync(join(dir, 'moved-on.yaml'), 'utf8')).toBe('version: 1\nname: Moved On\ndescription: after\n');
    expect(readFileSync(join(dir, 'new-one.yaml'), 'utf8')).toBe('version: 1\nname: New One\n');
    // And it read only what the journal holds past the snapshot: no stream, and no event before it
    expect(read).toEqual([]);
    expect(Math.min(...readFrom)).toBe(snapshotHead);
  });

  it('Given a snapshot and more journaled after it than reading each profile stream costs, Then boot reads the streams that moved, and only those', async () => {
    // Given a profile saved and a stop (a snapshot), then much else journaled, and an update of the profile among it
    journal = await openLevelJournal(join(root.path, 'journal'));
    const first = service(journal);
    await first.create({ name: 'Busy', description: 'before' });
    await first.create({ name: 'Still' });
    await first.onModuleDestroy();
    await journal.append('elsewhere', Array.from({ length: 1500 }, (_, i) => ({ type: 'other.event', data: { i } })));
    await journal.append('profile-busy', [{ type: 'profile.updated', data: { id: 'busy', fields: ['description'], text: 'version: 1\nname: Busy\ndescription: after\n' } }]);

    // When the service starts again (the streams it reads noted)
    const read: string[] = [];
    const readStream = journal.readStream.bind(journal);
    journal.readStream = (stream, ...rest) => {
      read.push(stream);
      return readStream(stream, ...rest);
    };
    const profiles = service(journal);

    // Then the update is there, read from the one stream that moved
    expect(await profiles.get('busy')).toMatchObject({ description: 'after' });
    expect(read.filter((s) => s.startsWith('profile-'))).toEqual(['profile-busy']);
  });
});
