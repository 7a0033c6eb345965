import { PgLeaseStore } from '../../src/cluster/pg-lease.store';
import { SUPERVISOR_LEASE_NAME } from '../../src/cluster/supervisor-lease.port';
import { EventJournal } from '../../src/journal/event-journal';
import { openPgJournal } from '../../src/journal/journal.factory';
import { Fence, JournalFencedError } from '../../src/journal/journal.port';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { waitFor } from '../support/wait-for';

const describePg = pgDescribe('lease.int-spec');

describePg('the supervisor lease and fenced appends on PostgreSQL', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  let journals: EventJournal[];
  let stores: PgLeaseStore[];
  beforeAll(async () => {
    cluster = await startPgCluster();
  });
  afterAll(() => cluster?.stop());
  beforeEach(async () => {
    db = await cluster.createDatabase();
    journals = [];
    stores = [];
  });
  afterEach(async () => {
    for (const j of journals) await j.close();
    for (const s of stores) await s.close();
    await db.drop();
  });
  const node = async () => {
    const journal = await openPgJournal(db.url, { follow: true });
    const store = new PgLeaseStore(db.url, 10_000);
    journals.push(journal);
    stores.push(store);
    return { journal, store };
  };
  const fence = (holder: string, term: number): Fence => ({ lease: SUPERVISOR_LEASE_NAME, holder, term });

  it('given two nodes claiming, when the holder lets its lease lapse, then the other takes the next term, and only then', async () => {
    const a = await node();
    const b = await node();
    expect(await a.store.claim(SUPERVISOR_LEASE_NAME, 'a', 60_000)).toMatchObject({ kind: 'acquire', term: 1 });
    expect(await b.store.claim(SUPERVISOR_LEASE_NAME, 'b', 60_000)).toMatchObject({ kind: 'refused', holder: 'a', term: 1 });
    expect(await a.store.claim(SUPERVISOR_LEASE_NAME, 'a', 300)).toMatchObject({ kind: 'renew', term: 1 });
    const taken = await waitFor(async () => {
      const d = await b.store.claim(SUPERVISOR_LEASE_NAME, 'b', 60_000);
      return d.kind === 'acquire' && d;
    }, { what: 'b to take the lapsed lease' });
    expect(taken.term).toBe(2);
    expect(await db.sql('SELECT holder, term FROM brainstem_leases')).toEqual([{ holder: 'b', term: '2' }]);
  });

  it('given another node took the lease, when the old holder appends fenced by its old term, then it is refused and nothing is written, while an unfenced append of the same group commits', async () => {
    const a = await node();
    const b = await node();
    await a.store.claim(SUPERVISOR_LEASE_NAME, 'a', 60_000);
    await a.journal.append('supervision', [{ type: 'round.started', data: { n: 1 } }], { fence: fence('a', 1) });
    await a.store.release(SUPERVISOR_LEASE_NAME, 'a');
    expect(await b.store.claim(SUPERVISOR_LEASE_NAME, 'b', 60_000)).toMatchObject({ kind: 'acquire', term: 2 });
    const headBefore = a.journal.head().seq;

    // Both queued before the writer runs: one group, one fenced appender.
    const stale = a.journal.append('supervision', [{ type: 'round.started', data: { n: 2 } }], { fence: fence('a', 1) });
    const other = a.journal.append('chat', [{ type: 'chat.message', data: { text: 'hi' } }]);
    await expect(stale).rejects.toBeInstanceOf(JournalFencedError);
    await expect(stale).rejects.toMatchObject({ code: 'journal_fenced' });
    expect((await other).events[0].seq).toBe(headBefore + 1);

    const rows = await db.sql('SELECT seq, stream FROM brainstem_events ORDER BY seq');
    expect(rows.map((r) => r.stream)).toEqual(['supervision', 'chat']);
    expect(await a.journal.streamVersion('supervision')).toBe(1);
    expect((await a.journal.verify()).ok).toBe(true);

    // The new holder's fenced append commits, and the old one sees it.
    const fresh = await b.journal.append('supervision', [{ type: 'round.started', data: { n: 3 } }], { fence: fence('b', 2), expectedVersion: 1 });
    expect(fresh.version).toBe(2);
    await waitFor(() => a.journal.head().seq === fresh.events[0].seq, { what: 'a to follow b' });
  });

  it('given a fenced append racing a takeover, then either it commits before the new term or it is refused: never after', async () => {
    const a = await node();
    const b = await node();
    await a.store.claim(SUPERVISOR_LEASE_NAME, 'a', 60_000);
    await a.store.release(SUPERVISOR_LEASE_NAME, 'a');
    const appends = Array.from({ length: 20 }, (_, i) =>
      a.journal.append('supervision', [{ type: 'round.started', data: { i } }], { fence: fence('a', 1) }).then(
        (r) => r.events[0].seq,
        (e: unknown) => (e instanceof JournalFencedError ? null : Promise.reject(e)),
      ),
    );
    const claimed = b.store.claim(SUPERVISOR_LEASE_NAME, 'b', 60_000);
    const seqs = await Promise.all(appends);
    expect(await claimed).toMatchObject({ kind: 'acquire', term: 2 });
    const written = seqs.filter((s): s is number => s !== null);
    expect(await db.sql('SELECT count(*)::int AS n FROM brainstem_events')).toEqual([{ n: written.length }]);
    // Anything appended under term 1 after term 2 began would show here: appends after the claim are all refused.
    const after = await Promise.allSettled([a.journal.append('supervision', [{ type: 'round.started' }], { fence: fence('a', 1) })]);
    expect(after[0]).toMatchObject({ status: 'rejected', reason: expect.any(JournalFencedError) });
  });
});
