import { openPgJournal } from '../../src/journal/journal.factory';
import { SCHEMA_VERSION } from '../../src/journal/pg.migrations';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { spawnService, startService } from '../support/service-process';
import { tempDir } from '../support/temp-dir';

const describePg = pgDescribe('schema-versions.int-spec');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A node of this release joining a journal database of another schema version (real service processes). */
describePg('journal schema versions on PostgreSQL', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  let dir: ReturnType<typeof tempDir>;
  const env = (id: string) => ({ BRAINSTEM_JOURNAL_URL: db.url, BRAINSTEM_JOURNAL_DIR: `${dir.path}/${id}`, BRAINSTEM_NODE_ID: id, BRAINSTEM_NODE_LEASE_TTL_S: '4' });
  const versions = async () => (await db.sql('SELECT version FROM brainstem_migrations ORDER BY version')).map((r) => Number(r.version));

  /** A journal of this release with a few events in it. */
  const journalWithEvents = async () => {
    const journal = await openPgJournal(db.url);
    for (let i = 0; i < 5; i++) await journal.append('history', [{ type: 'test.event', data: { i } }]);
    await journal.close();
  };

  beforeAll(async () => {
    cluster = await startPgCluster();
  });
  afterAll(() => cluster?.stop());
  beforeEach(async () => {
    db = await cluster.createDatabase();
    dir = tempDir('brainstem-schema-');
  });
  afterEach(async () => {
    await db.drop();
    dir.remove();
  });

  it('Given a database a newer release migrated, When a node of this release starts on it, Then it is refused, naming both versions, and nothing is changed', async () => {
    await journalWithEvents();
    await db.sql(`INSERT INTO brainstem_migrations (version, name) VALUES ($1, 'of a newer release')`, [SCHEMA_VERSION + 1]);
    const node = spawnService(env('a'));
    expect(await node.exited).toBe(1);
    expect(node.output()).toContain(
      `brainstem: the journal database ${db.url} has schema version ${SCHEMA_VERSION + 1}, newer than this Brainstem's (${SCHEMA_VERSION}): a newer release migrated it, so this one cannot run on it`,
    );
    expect(await db.sql('SELECT node_id FROM brainstem_nodes')).toEqual([]);
    expect(await versions()).toEqual([...Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1), SCHEMA_VERSION + 1]);
  }, 60000);

  it('Given a database of the release before (version 4) that a node of that release runs on, Then a node of this release is refused, naming both versions and the node; once that node is gone, it migrates the journal and runs', async () => {
    await journalWithEvents();
    // The schema as the release before left it (migration 5 not applied), and one of its nodes heartbeating.
    await db.sql('ALTER TABLE brainstem_nodes DROP COLUMN round_listeners');
    await db.sql('DELETE FROM brainstem_migrations WHERE version = 5');
    await db.sql(`INSERT INTO brainstem_nodes (node_id, started_at, heartbeat_at) VALUES ('old', now(), now())`);
    expect(SCHEMA_VERSION).toBe(5);

    const refused = spawnService(env('new'));
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toContain(
      `brainstem: the journal database ${db.url} has schema version 4, older than this Brainstem's (5), and node old of the older release runs on it (heard from within 4 s): a node runs only on its own schema version. Stop every node of the older release, then start this one: it migrates the journal`,
    );
    expect(await versions()).toEqual([1, 2, 3, 4]);

    // The old node stopped (silent past the lease): the new one migrates the journal and runs on it, its history whole.
    await db.sql(`UPDATE brainstem_nodes SET heartbeat_at = now() - interval '1 minute' WHERE node_id = 'old'`);
    const node = await startService(env('new'));
    try {
      expect(await versions()).toEqual([1, 2, 3, 4, 5]);
      const events = (await (await fetch(`${node.url}/api/v1/journal/events?stream=history`, { headers: node.auth })).json()) as Json;
      expect((events.events as Json[]).map((e) => e.data.i)).toEqual([0, 1, 2, 3, 4]);
    } finally {
      node.child.kill('SIGTERM');
      expect(await node.exited).toBe(0);
    }
    // Its clean stop is marked: a node of a later release need not wait out its lease.
    expect(await db.sql(`SELECT stopped_at IS NOT NULL AS stopped, credential_digest FROM brainstem_nodes WHERE node_id = 'new'`)).toEqual([{ stopped: true, credential_digest: null }]);
  }, 90000);
});
