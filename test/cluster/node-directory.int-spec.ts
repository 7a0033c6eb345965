import { PgNodeDirectory } from '../../src/cluster/pg-node-directory';
import { openPgJournal } from '../../src/journal/journal.factory';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';

const describePg = pgDescribe('node-directory.int-spec');

describePg('the node directory on PostgreSQL', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  const started: PgNodeDirectory[] = [];
  // A lease long enough that no periodic read happens during a test: what a node knows comes from start and refresh.
  const open = async (self: string) => {
    const nodes = new PgNodeDirectory(db.url, { self, leaseTtlS: 300 });
    await nodes.start();
    started.push(nodes);
    return nodes;
  };

  beforeAll(async () => {
    cluster = await startPgCluster();
    db = await cluster.createDatabase();
    // The journal's migrations create the nodes' table.
    await (await openPgJournal(db.url)).close();
  });
  afterAll(async () => {
    for (const n of started) await n.stop();
    await db?.drop();
    cluster?.stop();
  });

  it('Given a node that joined after the last read, When refreshed, Then it is up; one never heard of stays down', async () => {
    const a = await open('a');
    expect(a.isUp('a')).toBe(true);
    await open('d');
    expect(a.isUp('d')).toBe(false);
    await a.refresh();
    expect(a.isUp('d')).toBe(true);
    expect(a.isUp('nobody')).toBe(false);
  });
});
