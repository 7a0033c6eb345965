import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventJournal } from '../../src/journal/event-journal';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { FileSessionEnvStore } from '../../src/sessions/session-env.store';
import { SessionInput, sessionStream } from '../../src/sessions/session.events';
import { sessionStore } from '../support/session-store';
import { tempDir } from '../support/temp-dir';

const SECRET = 'sk-ant-api03-not-for-the-journal';

const input = (id: string, env: Record<string, string>): Omit<SessionInput, 'alias'> => ({
  id,
  title: '',
  runtime: 'command',
  profile_id: null,
  cwd: '/tmp',
  command: 'node',
  args: [],
  env,
  excluded: false,
  created_at: 1_000,
});
const request = (id: string, env: Record<string, string>) => ({ id, cwd: '/tmp', runtime: { name: 'command', command: 'node' }, env });

describe('session env values stay out of the journal (real LevelDB, real files)', () => {
  const dir = tempDir('brainstem-session-env-');
  const journalDir = join(dir.path, 'journal');
  const envDir = join(journalDir, 'session-env');
  let journal: EventJournal;

  const open = async () => {
    journal = await openLevelJournal(journalDir);
    const store = sessionStore(journal, new FileSessionEnvStore(envDir));
    await store.registry.load();
    return store;
  };
  const everything = async () => JSON.stringify(await journal.readAll(0, 10_000));

  afterEach(() => journal.close());
  afterAll(() => dir.remove());

  it('given a session created with env, then the journal names the variables only, and a reopened service has the values', async () => {
    const store = await open();
    const actor = await store.create(request('cs_withenv', { API_KEY: SECRET, MODE: 'fast' }));
    expect(actor.context.env).toEqual({ API_KEY: SECRET, MODE: 'fast' });
    expect(await everything()).not.toContain(SECRET);
    const [created] = await journal.readStream(sessionStream('cs_withenv'));
    expect(created.data).toMatchObject({ env_keys: ['API_KEY', 'MODE'] });
    expect(created.data).not.toHaveProperty('env');
    const file = join(envDir, 'cs_withenv.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(envDir).mode & 0o777).toBe(0o700);
    await journal.close();

    const reopened = await open();
    expect(reopened.registry.get('cs_withenv').context.env).toEqual({ API_KEY: SECRET, MODE: 'fast' });
  });

  it('given a session with env, when it exits, then its values are removed', async () => {
    const store = await open();
    const actor = await store.create(request('cs_exits', { API_KEY: SECRET }));
    await store.start(actor, 1);
    expect(existsSync(join(envDir, 'cs_exits.json'))).toBe(true);
    await actor.run(() => store.commands.execute(actor, { type: 'report_exit', code: 0, signal: null, spawn_failed: false }));
    expect(existsSync(join(envDir, 'cs_exits.json'))).toBe(false);
  });

  it('given a session without env, then nothing is stored for it', async () => {
    const store = await open();
    await store.create(request('cs_noenv', {}));
    expect(existsSync(join(envDir, 'cs_noenv.json'))).toBe(false);
  });

  it('given values no live session owns (a crash between storing them and journaling the session), then boot removes them', async () => {
    mkdirSync(envDir, { recursive: true });
    writeFileSync(join(envDir, 'cs_orphan.json'), JSON.stringify({ API_KEY: SECRET }));
    writeFileSync(join(envDir, 'cs_cutshort.json.tmp'), '{"API_');
    const { registry } = await open();
    expect(registry.find('cs_orphan')).toBeUndefined();
    expect(existsSync(join(envDir, 'cs_orphan.json'))).toBe(false);
    expect(existsSync(join(envDir, 'cs_cutshort.json.tmp'))).toBe(false);
    // The live session's values from the first test are kept.
    expect(existsSync(join(envDir, 'cs_withenv.json'))).toBe(true);
  });

  it('given a journal written before values were kept outside it, then its sessions still get their env', async () => {
    const { registry } = await open();
    const legacy = { ...input('cs_legacy', {}), alias: 'w99', env: { OLD: 'value' } };
    await journal.append(sessionStream('cs_legacy'), [{ type: 'session.created', data: legacy }]);
    await journal.append('sessions', [{ type: 'session.alias_assigned', data: { session_id: 'cs_legacy', alias: 'w99', number: 99 } }]);
    expect(registry.find('cs_legacy')).toBeUndefined();
    await journal.close();
    expect((await open()).registry.get('cs_legacy').context.env).toEqual({ OLD: 'value' });
  });
});
