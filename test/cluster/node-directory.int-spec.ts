import { PgNodeDirectory } from '../../src/cluster/pg-node-directory';
import { openPgJournal } from '../../src/journal/journal.factory';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { waitFor } from '../support/wait-for';

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

  it('Given nodes whose clients follow the rounds stream, When a node hears them, Then it knows how many follow on each other node that is up, as each last heartbeat it', async () => {
    const a = await open('e');
    let followers = 2;
    const b = await open('f');
    b.reportRoundListeners(() => followers);
    // f's count is sent with its heartbeats: its first one (at start) said 0, the one its URL triggers says 2.
    b.advertise('http://127.0.0.1:1');
    await waitFor(async () => {
      await a.refresh();
      return a.roundFollowers().get('f') === 2;
    }, { what: "f's count in e's reads" });
    followers = 0;
    b.advertise('http://127.0.0.1:1');
    await waitFor(async () => {
      await a.refresh();
      return a.roundFollowers().get('f') === 0;
    }, { what: "f's count to fall to 0" });
    // A node's own count is not among the others'.
    expect(a.roundFollowers().has('e')).toBe(false);
  });
});
