import { EventJournal } from '../../src/journal/event-journal';
import { openPgJournal } from '../../src/journal/journal.factory';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { waitFor } from '../support/wait-for';

const describePg = pgDescribe('pg-faults.int-spec');

const APPENDERS = 8;

describePg('the journal on PostgreSQL when the server crashes under load', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  let journal: EventJournal | null = null;
  beforeAll(async () => {
    // fsync and synchronous commits on: what the server acknowledged survives its crash, as on a real server.
    cluster = await startPgCluster({ durable: true });
    db = await cluster.createDatabase();
  });
  afterAll(async () => {
    await journal?.close();
    cluster?.stop();
  });

  it('given appenders running through a crash and restart, then appends fail with the cause while it is down, resume after, and nothing acknowledged is lost or written twice', async () => {
    journal = await openPgJournal(db.url);
    const j = journal;
    const acknowledged = new Set<string>();
    const failures: string[] = [];
    let running = true;
    let phase: 'before' | 'down' | 'after' = 'before';
    const afterAcks = () => [...acknowledged].filter((id) => id.startsWith('after-')).length;
    const appender = async (n: number) => {
      for (let i = 0; running; i++) {
        const id = `${phase}-${n}-${i}`;
        try {
          await j.append(`load-${n}`, [{ type: 'load.appended', data: { id } }]);
          acknowledged.add(id);
        } catch (e) {
          failures.push((e as Error).message);
          // A refused append is the caller's to retry; this one tries the next event after a breath, not in a hot loop.
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    };
    const loops = Array.from({ length: APPENDERS }, (_, n) => appender(n));

    await waitFor(() => acknowledged.size >= 200, { timeoutMs: 60_000 });
    phase = 'down';
    cluster.crash();
    await waitFor(() => failures.length >= APPENDERS, { timeoutMs: 60_000 });
    cluster.start();
    phase = 'after';
    await waitFor(() => afterAcks() >= 200, { timeoutMs: 120_000 });
    running = false;
    await Promise.all(loops);

    // Every failure says the database is unavailable and why (a 503 journal_unavailable to clients), never a bare EPIPE.
    expect(failures.length).toBeGreaterThanOrEqual(APPENDERS);
    for (const message of new Set(failures)) expect(message).toMatch(/^journal database .+ unavailable: \S/);

    // Read back by a journal opened afresh (verifying the whole chain at open).
    await j.close();
    journal = await openPgJournal(db.url);
    expect(await journal.verify()).toMatchObject({ ok: true });
    const stored = (await journal.readAll(0, 1_000_000)).map((e) => (e.data as { id: string }).id);
    const unique = new Set(stored);
    expect(unique.size).toBe(stored.length);
    const lost = [...acknowledged].filter((id) => !unique.has(id));
    expect(lost).toEqual([]);
    expect(stored.length).toBe(journal.head().seq);
  });
});
