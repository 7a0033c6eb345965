import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { EventJournal } from '../../src/journal/event-journal';
import { openPgJournal } from '../../src/journal/journal.factory';
import { FsProfileStore } from '../../src/profiles/profile.store';
import { ProfilesService } from '../../src/profiles/profiles.service';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';

const describePg = pgDescribe('profiles-follow.int-spec');

interface Node {
  journal: EventJournal;
  profiles: ProfilesService;
  dir: string;
}

describePg('Agent Profiles on two nodes sharing a PostgreSQL journal, each with its own profiles directory', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  let root: ReturnType<typeof tempDir>;
  const nodes: Node[] = [];

  const start = async (name: string): Promise<Node> => {
    const journal = await openPgJournal(db.url, { follow: true });
    const dir = join(root.path, name);
    const profiles = new ProfilesService(new FsProfileStore(dir), journal, () => new Date(), { home: homedir() });
    await profiles.onModuleInit();
    const node = { journal, profiles, dir };
    nodes.push(node);
    return node;
  };
  const stop = async (node: Node) => {
    nodes.splice(nodes.indexOf(node), 1);
    await node.profiles.onModuleDestroy();
    await node.journal.close();
  };
  const file = (node: Node, id: string) => (existsSync(join(node.dir, `${id}.yaml`)) ? readFileSync(join(node.dir, `${id}.yaml`), 'utf8') : null);

  beforeAll(async () => {
    cluster = await startPgCluster();
  });
  afterAll(() => cluster?.stop());
  beforeEach(async () => {
    db = await cluster.createDatabase();
    root = tempDir('brainstem-profiles-follow-');
  });
  afterEach(async () => {
    for (const n of [...nodes]) await stop(n);
    await db.drop();
    root.remove();
  });

  it('Given a profile saved on node a, Then node b writes its file from the journal and lists it; its update, default and deletion follow too', async () => {
    const a = await start('a');
    const b = await start('b');

    const saved = await a.profiles.create({ name: 'Shared Reviewer', description: 'from a', scope: 'personal' });
    await waitFor(() => file(b, 'shared-reviewer') === file(a, 'shared-reviewer'), { timeoutMs: 30_000, what: "b to write a's profile" });
    const { warnings: _w, ...view } = saved;
    expect((await b.profiles.list()).profiles.find((p) => p.id === 'shared-reviewer')).toEqual(view);

    await a.profiles.update('shared-reviewer', { description: 'changed on a' });
    await a.profiles.setDefault('shared-reviewer');
    await waitFor(async () => (await b.profiles.get('shared-reviewer')).is_default && file(b, 'shared-reviewer') === file(a, 'shared-reviewer'), {
      timeoutMs: 30_000,
      what: 'b to follow the update and the default',
    });
    expect(await b.profiles.get('shared-reviewer')).toMatchObject({ description: 'changed on a', scope: 'personal' });

    await a.profiles.remove('shared-reviewer');
    await waitFor(() => file(b, 'shared-reviewer') === null, { timeoutMs: 30_000, what: 'b to remove the file' });
    await expect(b.profiles.get('shared-reviewer')).rejects.toMatchObject({ code: 'not_found' });
    expect(await b.profiles.resolveForSession({})).toBe('coding-assistant');
  });

  it('Given a hand edit on node b, Then node a takes it; and a node started later finds every profile through the index', async () => {
    const a = await start('a');
    const b = await start('b');
    await a.profiles.create({ name: 'Edited', description: 'before' });
    await waitFor(() => file(b, 'edited') !== null, { timeoutMs: 30_000, what: "b to write a's profile" });

    writeFileSync(join(b.dir, 'edited.yaml'), '# by hand on b\nname: Edited\ndescription: after\n');
    expect(await b.profiles.get('edited')).toMatchObject({ description: 'after' });
    await waitFor(() => file(a, 'edited') === '# by hand on b\nname: Edited\ndescription: after\n', { timeoutMs: 30_000, what: "a to write b's edit" });

    const c = await start('c');
    expect(file(c, 'edited')).toBe('# by hand on b\nname: Edited\ndescription: after\n');
    expect(await c.profiles.get('edited')).toMatchObject({ description: 'after' });
  });

  it('Given both nodes, When each saves a profile of the same name at once, Then one is saved and the other refused, naming the taken name', async () => {
    const a = await start('a');
    const b = await start('b');
    const results = await Promise.allSettled([a.profiles.create({ name: 'Twin' }), b.profiles.create({ name: 'Twin' })]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(['profile_name_taken']);
    await waitFor(() => file(a, 'twin') !== null && file(a, 'twin') === file(b, 'twin'), { timeoutMs: 30_000, what: 'both nodes to hold the one Twin' });
  });
});
