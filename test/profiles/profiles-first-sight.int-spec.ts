import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { EventJournal } from '../../src/journal/event-journal';
import { JournalEvent } from '../../src/journal/journal.port';
import { FsProfileStore } from '../../src/profiles/profile.store';
import { ProfilesService } from '../../src/profiles/profiles.service';
import { BUILTIN_PROFILES } from '../../src/profiles/templates';
import { tempDir } from '../support/temp-dir';

const FILES = 40;

/** Every `.yaml` file of the directory with its text. */
function yamlFiles(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).filter((f) => f.endsWith('.yaml')).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

/** A directory of profiles written by hand, first seen by a journal that knows none of them (real LevelDB, real files). */
describe('Agent Profiles at first sight: files the journal never saw', () => {
  let root: ReturnType<typeof tempDir>;
  let dir: string;
  let journal: EventJournal;
  let running: ProfilesService | null = null;
  const texts: Record<string, string> = {};

  /** A graceful stop: the service snapshots its catalogue. */
  const stop = async (): Promise<void> => {
    await running?.onModuleDestroy();
    running = null;
  };
  const start = async (): Promise<ProfilesService> => {
    await stop();
    running = new ProfilesService(new FsProfileStore(dir), journal, () => new Date(), { home: homedir() });
    await running.onModuleInit();
    return running;
  };
  const profileEvents = async (): Promise<JournalEvent[]> => (await journal.readAll(0, 100_000)).filter((e) => e.type.startsWith('profile.'));

  beforeEach(async () => {
    root = tempDir('brainstem-profiles-first-sight-');
    dir = join(root.path, 'profiles');
    mkdirSync(dir);
    for (let i = 0; i < FILES; i++) {
      const id = `hand-${String(i).padStart(2, '0')}`;
      texts[id] = i === 7 ? 'name: [unclosed\n' : `# written by hand\nname: Hand ${i}\ndescription: file ${i}\n`;
      writeFileSync(join(dir, `${id}.yaml`), texts[id]);
    }
    journal = await openLevelJournal(join(root.path, 'journal'));
  });
  afterEach(async () => {
    await stop();
    await journal.close();
    root.remove();
  });

  it('journals every file as a hand edit (its text, its error, no document) in one append that registers their streams, and a restart lists the same', async () => {
    // When the service first lists the directory
    const before = journal.head().seq;
    const list = await (await start()).list();

    // Then every file is listed as it reads, the malformed one with its error
    expect(list.profiles).toHaveLength(BUILTIN_PROFILES.length + FILES);
    const hand = list.profiles.filter((p) => p.id.startsWith('hand-'));
    expect(hand.filter((p) => p.error === null).map((p) => p.description)).toEqual(
      Array.from({ length: FILES }, (_, i) => `file ${i}`).filter((_, i) => i !== 7),
    );
    expect(hand[7]).toMatchObject({ id: 'hand-07', name: null, error: expect.stringContaining('invalid YAML') });

    // And the journal took each file once, as it is, with every stream registered, all in one append
    const events = await profileEvents();
    const edits = events.filter((e) => e.type === 'profile.edited_on_disk');
    expect(edits.map((e) => e.data).sort((a, b) => ((a as { id: string }).id < (b as { id: string }).id ? -1 : 1))).toEqual(
      Object.entries(texts).map(([id, text]) => ({ id, text, error: id === 'hand-07' ? expect.stringContaining('invalid YAML') : null, at: expect.any(String) })),
    );
    const registered = events.filter((e) => e.type === 'profile.registered');
    expect(registered).toHaveLength(1);
    expect([...(registered[0].data as { ids: string[] }).ids].sort()).toEqual(Object.keys(texts));
    const appended = [...edits, ...registered].map((e) => e.seq).sort((a, b) => a - b);
    expect(appended).toEqual(Array.from({ length: FILES + 1 }, (_, i) => before + 1 + i));
    expect(new Set([...edits, ...registered].map((e) => e.at)).size).toBe(1);
    const count = events.length;

    // And a restart lists the same and journals nothing
    expect(await (await start()).list()).toEqual(list);
    // And so does one without the state file (the journal is the truth)
    await stop();
    rmSync(join(dir, '.brainstem-profiles.json'));
    expect(await (await start()).list()).toEqual(list);
    // And one without the directory: every file is written back from the journal's text, byte for byte
    await stop();
    const files = yamlFiles(dir);
    rmSync(dir, { recursive: true });
    expect(await (await start()).list()).toEqual(list);
    expect(yamlFiles(dir)).toEqual(files);
    expect(await profileEvents()).toHaveLength(count);
  });

  it('writes the state file once at first sight, recording the mtime of every file it journaled', async () => {
    // Given a store that counts its state file's writes (the real one, on the same directory)
    const states: string[] = [];
    const store = new (class extends FsProfileStore {
      override writeState(text: string): Promise<void> {
        states.push(text);
        return super.writeState(text);
      }
    })(dir);
    // When the service first lists the directory
    running = new ProfilesService(store, journal, () => new Date(), { home: homedir() });
    await running.onModuleInit();
    await running.list();
    // Then the state file was written once, and holds each file's mtime as the file has it
    expect(states).toHaveLength(1);
    const state = JSON.parse(readFileSync(join(dir, '.brainstem-profiles.json'), 'utf8')) as { profiles: Record<string, { file_mtime_ms: number }> };
    expect(state).toEqual(JSON.parse(states[0]));
    expect(Object.fromEntries(Object.entries(state.profiles).map(([id, p]) => [id, p.file_mtime_ms]))).toEqual(
      Object.fromEntries(Object.keys(texts).map((id) => [id, statSync(join(dir, `${id}.yaml`)).mtimeMs])),
    );
  });

  it('after first sight, journals a later edit of a file as an edit, and lists a file deleted by hand no more', async () => {
    // Given the files seen once
    const profiles = await start();
    await profiles.list();
    const count = (await profileEvents()).length;
    // When one file is edited and another deleted by hand
    writeFileSync(join(dir, 'hand-03.yaml'), 'name: Hand 3\ndescription: edited later\n');
    rmSync(join(dir, 'hand-04.yaml'));
    const list = await profiles.list();
    // Then the edit is listed and journaled, once, as an edit of that profile
    expect(list.profiles.find((p) => p.id === 'hand-03')).toMatchObject({ description: 'edited later', error: null });
    const events = (await profileEvents()).slice(count);
    expect(events.map((e) => [e.stream, e.type, e.version])).toEqual([['profile-hand-03', 'profile.edited_on_disk', 2]]);
    // And the deleted file is listed no more
    expect(list.profiles.find((p) => p.id === 'hand-04')).toBeUndefined();
    expect(list.profiles).toHaveLength(BUILTIN_PROFILES.length + FILES - 1);
  });
});
