import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { journalContract } from './journal.contract';
import { EventJournal } from '../../src/journal/event-journal';
import { openPgJournal, PgJournalOptions } from '../../src/journal/journal.factory';
import { MIGRATIONS } from '../../src/journal/pg.migrations';
import { AppendResult, JournalConflictError, JournalCorruptError, JournalEvent } from '../../src/journal/journal.port';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { spawnService, startService } from '../support/service-process';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';

const BIN = resolve(__dirname, '../../bin/brainstem.js');

const describePg = pgDescribe('pg-journal.int-spec');

function cli(...args: string[]): { status: number | null; out: string } {
  return cliWith({}, ...args);
}

function cliWith(env: Record<string, string>, ...args: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [BIN, 'journal', ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { status: r.status, out: r.stdout + r.stderr };
}

describePg('the journal on PostgreSQL', () => {
  let cluster: PgCluster;
  beforeAll(async () => {
    cluster = await startPgCluster();
  });
  afterAll(() => cluster?.stop());

  journalContract('postgres', async () => {
    const db = await cluster.createDatabase();
    return { open: (options) => openPgJournal(db.url, options), cleanup: () => db.drop() };
  });

  describe('several journals on one database', () => {
    let db: PgDatabase;
    const opened: EventJournal[] = [];
    const open = async (options: PgJournalOptions = {}) => {
      const journal = await openPgJournal(db.url, options);
      opened.push(journal);
      return journal;
    };
    /** Everything the journal publishes on committed$, from now on. */
    const published = (journal: EventJournal) => {
      const seen: JournalEvent[] = [];
      journal.committed$.subscribe((e) => seen.push(e));
      return seen;
    };
    beforeEach(async () => {
      db = await cluster.createDatabase();
    });
    afterEach(async () => {
      for (const j of opened.splice(0)) await j.close();
      await db.drop();
    });

    it('given three nodes starting together on an empty database, applies each migration once', async () => {
      await Promise.all([open(), open(), open()]);
      expect((await db.sql('SELECT version FROM brainstem_migrations ORDER BY version')).map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await db.sql('SELECT seq FROM brainstem_head')).toHaveLength(1);
    });

    it('when A appends, B (following by LISTEN) publishes the same events on committed$ in order, with no gap and no duplicate', async () => {
      const a = await open({ follow: true });
      const b = await open({ follow: true });
      const onB = published(b);
      const written: JournalEvent[] = [];
      for (let i = 0; i < 40; i++) written.push(...(await a.append(`f${i % 3}`, [{ type: 'f.e', data: { i } }, { type: 'f.e', data: { i, second: true } }])).events);
      // And some issued at once, so A commits them in groups.
      const grouped = await Promise.all(Array.from({ length: 40 }, (_, i) => a.append(`g${i % 4}`, [{ type: 'g.e', data: { i } }])));
      written.push(...grouped.flatMap((r) => r.events).sort((x, y) => x.seq - y.seq));
      await waitFor(() => onB.length >= written.length, { what: 'B to publish what A appended' });
      expect(onB).toEqual(written);
      expect(onB.map((e) => e.seq)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
      expect(b.head()).toEqual(a.head());
      expect(await b.streamVersion('f1')).toBe(await a.streamVersion('f1'));
    });

    it("follow(): B's followers apply each event A appended before B publishes it, and never B's own", async () => {
      const a = await open({ follow: true });
      const b = await open({ follow: true });
      const log: string[] = [];
      const unfollow = b.follow((e) => log.push(`apply ${e.seq}`));
      b.committed$.subscribe((e) => log.push(`publish ${e.seq}`));
      await a.append('x', [{ type: 'x.e' }, { type: 'x.e' }]);
      await waitFor(() => log.length === 4, { what: "B to follow A's two events" });
      await b.append('y', [{ type: 'y.e' }]);
      await a.append('x', [{ type: 'x.e' }]);
      await waitFor(() => log.length === 7, { what: "B to follow A's third event" });
      expect(log).toEqual(['apply 1', 'publish 1', 'apply 2', 'publish 2', 'publish 3', 'apply 4', 'publish 4']);
      unfollow();
      await a.append('x', [{ type: 'x.e' }]);
      await waitFor(() => log.length === 8, { what: 'B to publish the last one' });
      expect(log[7]).toBe('publish 5');
    });

    it('when the LISTEN connections are cut, the followers open them again and catch up by seq: nothing appended meanwhile is lost', async () => {
      const errors: Error[] = [];
      const a = await open({ follow: true });
      const b = await open({ follow: true, onFollowError: (e) => errors.push(e) });
      const onB = published(b);
      await a.append('r', [{ type: 'r.e', data: { i: 0 } }]);
      await waitFor(() => onB.length === 1, { what: 'B to follow the first append' });
      const cut = await db.sql(`SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`);
      expect(cut.length).toBe(2);
      // Appended while B's connection is down or coming back: the notices of some are lost, the catch-up reads them.
      for (let i = 1; i <= 5; i++) await a.append('r', [{ type: 'r.e', data: { i } }]);
      await waitFor(() => errors.length > 0 && onB.length === 6, { what: 'B to hear the drop and catch up' });
      // Listening again: a later append arrives on its notice alone.
      await waitFor(async () => (await db.sql(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'LISTEN %'`))[0].n === 2, { what: 'both to LISTEN again' });
      await a.append('r', [{ type: 'r.e', data: { i: 6 } }]);
      await waitFor(() => onB.length === 7, { what: 'B to follow an append after it listens again' });
      expect(onB.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(onB.map((e) => (e.data as { i: number }).i)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    });

    it('catchUp() reads on demand what another journal appended, and a later append of its own follows it', async () => {
      const a = await open();
      const b = await open();
      const onB = published(b);
      await a.append('x', [{ type: 'x.one' }, { type: 'x.two' }]);
      expect(b.head().seq).toBe(0);
      await b.catchUp();
      expect(onB.map((e) => [e.seq, e.type])).toEqual([
        [1, 'x.one'],
        [2, 'x.two'],
      ]);
      const own = await b.append('x', [{ type: 'x.three' }], { expectedVersion: 2 });
      expect(own.events[0]).toMatchObject({ seq: 3, version: 3 });
      expect(await b.verify()).toMatchObject({ ok: true, checked: 3 });
    });

    it('given two journals appending at once, every acknowledged event is stored once in one gapless chain that both publish whole', async () => {
      const a = await open({ follow: true });
      const b = await open({ follow: true });
      const onA = published(a);
      const onB = published(b);
      const appendMany = (j: EventJournal, node: string) =>
        Promise.all(Array.from({ length: 150 }, (_, i) => j.append(`shared-${i % 5}`, [{ type: 'n.e', data: { node, i } }])));
      const acked: AppendResult[] = (await Promise.all([appendMany(a, 'a'), appendMany(b, 'b')])).flat();
      const total = 300;
      expect(acked.map((r) => r.events[0].seq).sort((x, y) => x - y)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      await b.catchUp();
      await a.catchUp();
      const stored = await a.readAll(0, 1000);
      expect(stored).toHaveLength(total);
      for (const r of acked) expect(stored[r.events[0].seq - 1]).toEqual(r.events[0]);
      for (let s = 0; s < 5; s++) expect((await b.readStream(`shared-${s}`)).map((e) => e.version)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      await waitFor(() => onA.length >= total && onB.length >= total, { what: 'both to publish every event' });
      expect(onA).toEqual(stored);
      expect(onB).toEqual(stored);
      expect(await a.verify()).toMatchObject({ ok: true, checked: total });
      expect(await b.verify()).toMatchObject({ ok: true, checked: total });
    });

    it('given two journals racing to append to one stream with the same expected version, exactly one wins each round', async () => {
      const a = await open();
      const b = await open();
      await a.append('race', [{ type: 'r.start' }]);
      for (let round = 1; round <= 20; round++) {
        const outcomes = await Promise.allSettled([
          a.append('race', [{ type: 'r.write', data: { w: 'a', round } }], { expectedVersion: round }),
          b.append('race', [{ type: 'r.write', data: { w: 'b', round } }], { expectedVersion: round }),
        ]);
        const won = outcomes.filter((o): o is PromiseFulfilledResult<AppendResult> => o.status === 'fulfilled');
        expect(won).toHaveLength(1);
        expect(won[0].value.events[0].version).toBe(round + 1);
        const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
        expect(lost.reason).toBeInstanceOf(JournalConflictError);
        expect(lost.reason).toMatchObject({ actual: round + 1 });
      }
      const events = await a.readStream('race');
      expect(events.map((e) => e.version)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
      expect(events.slice(1).map((e) => (e.data as { round: number }).round)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(await b.verify()).toMatchObject({ ok: true, checked: 21 });
    });
  });

  describe('tampering is noticed', () => {
    let db: PgDatabase;
    beforeEach(async () => {
      db = await cluster.createDatabase();
    });
    afterEach(() => db.drop());

    async function writeEvents(count: number, checkpointEvery = 4096): Promise<void> {
      const journal = await openPgJournal(db.url, { checkpointEvery });
      for (let i = 1; i <= count; i++) await journal.append(`s${i % 3}`, [{ type: 'test.event', data: { i, text: `event number ${i}` } }]);
      await journal.close();
    }
    /** A hand UPDATE of one byte of the event's stored JSON. */
    const alter = (seq: number) => db.sql(`UPDATE brainstem_events SET body = replace(body, 'event number ${seq}"', 'event numbeX ${seq}"') WHERE seq = $1`, [seq]);
    const verify = () => cli('verify', '--url', db.url);

    it('given one event row updated by hand, open refuses naming its seq, and verify (journal and CLI) names it', async () => {
      await writeEvents(30);
      await alter(12);
      await expect(openPgJournal(db.url)).rejects.toThrow(/corrupt at seq 12\b/);
      await expect(openPgJournal(db.url)).rejects.toBeInstanceOf(JournalCorruptError);
      const offline = await openPgJournal(db.url, { verifyOnOpen: 'none' });
      try {
        expect(await offline.verify()).toMatchObject({ ok: false, first_bad_seq: 12, error: expect.stringMatching(/event altered/) });
      } finally {
        await offline.close();
      }
      const r = verify();
      expect(r.status).toBe(1);
      expect(r.out).toContain('BROKEN at seq 12');
    });

    it('given a deleted event row in the middle, open refuses naming the missing seq, and the CLI verify agrees', async () => {
      await writeEvents(30);
      await db.sql('DELETE FROM brainstem_events WHERE seq = 17');
      await expect(openPgJournal(db.url)).rejects.toThrow(/corrupt at seq 17\b/);
      expect(verify().out).toContain('BROKEN at seq 17');
    });

    it('given the last event row deleted, open refuses because the head names it', async () => {
      await writeEvents(30);
      await db.sql('DELETE FROM brainstem_events WHERE seq = 30');
      await expect(openPgJournal(db.url)).rejects.toThrow(/corrupt at seq 30\b/);
      expect(verify().out).toContain('BROKEN at seq 30');
    });

    it('given a row inserted past the head, open refuses at it', async () => {
      await writeEvents(30);
      await db.sql(`INSERT INTO brainstem_events SELECT 31, stream, 99, hash, prev_hash, body FROM brainstem_events WHERE seq = 30`);
      await expect(openPgJournal(db.url)).rejects.toThrow(/corrupt at seq 31: event beyond the recorded head 30/);
      expect(verify().out).toContain('BROKEN at seq 31');
    });

    it('given damage before the last checkpoint, boot skips it but verify and reads of that event report it', async () => {
      await writeEvents(30, 10);
      await alter(3);
      const journal = await openPgJournal(db.url, { checkpointEvery: 10 });
      try {
        expect(await journal.verify()).toMatchObject({ ok: false, first_bad_seq: 3 });
        await expect(journal.readStream('s0')).rejects.toThrow(/corrupt at seq 3\b/);
      } finally {
        await journal.close();
      }
      expect(verify().out).toContain('BROKEN at seq 3');
    });

    it('given an altered snapshot, loading it fails', async () => {
      const journal = await openPgJournal(db.url);
      await journal.append('snap', [{ type: 'test.event', data: { i: 1 } }]);
      await journal.saveSnapshot('snap', { version: 1, state: { total: 1 } });
      await db.sql(`UPDATE brainstem_snapshots SET body = replace(body, '"total":1', '"total":9')`);
      try {
        await expect(journal.loadSnapshot('snap')).rejects.toThrow(/snapshot of snap was altered/);
      } finally {
        await journal.close();
      }
    });

    it('given an event row updated by hand, the service refuses to start with the same error as open', async () => {
      await writeEvents(30);
      await alter(12);
      const error = await openPgJournal(db.url).then(
        () => null,
        (e: Error) => e.message,
      );
      expect(error).toMatch(/^journal is corrupt at seq 12: /);
      const dir = tempDir('brainstem-pg-service-');
      try {
        const service = spawnService({ BRAINSTEM_JOURNAL_URL: db.url, BRAINSTEM_JOURNAL_DIR: dir.path });
        expect(await service.exited).toBe(1);
        expect(service.output()).toContain(`brainstem: ${error}\n`);
      } finally {
        dir.remove();
      }
    });
  });

  describe('the service on BRAINSTEM_JOURNAL_URL', () => {
    it('keeps what it journals in the database, names it in its log, and starts again on it', async () => {
      const db = await cluster.createDatabase();
      const dir = tempDir('brainstem-pg-service-');
      const env = { BRAINSTEM_JOURNAL_URL: db.url, BRAINSTEM_JOURNAL_DIR: dir.path };
      try {
        for (const text of ['first start', 'second start']) {
          const service = await startService(env);
          try {
            const res = await fetch(`${service.url}/api/v1/session-os/main-brain/messages`, {
              method: 'POST',
              headers: { ...service.auth, 'content-type': 'application/json' },
              body: JSON.stringify({ text }),
            });
            expect(res.status).toBe(201);
            expect(service.output()).toContain(`journal ${db.url}`);
          } finally {
            service.child.kill('SIGTERM');
            expect(await service.exited).toBe(0);
          }
        }
        const rows = await db.sql(`SELECT body FROM brainstem_events WHERE body LIKE '%"type":"chat.message"%' ORDER BY seq`);
        // Each message is followed by the service's notice that no brain is connected to read it.
        const notice = expect.objectContaining({ role: 'system', kind: 'notice' });
        expect(rows.map((r) => (JSON.parse(String(r.body)) as JournalEvent).data)).toEqual([
          expect.objectContaining({ role: 'user', text: 'first start' }),
          notice,
          expect.objectContaining({ role: 'user', text: 'second start' }),
          notice,
        ]);
      } finally {
        dir.remove();
        await db.drop();
      }
    });
  });

  describe('the journal CLI with --url', () => {
    let db: PgDatabase;
    beforeAll(async () => {
      db = await cluster.createDatabase();
    });
    afterAll(() => db.drop());

    it('refuses a database with no journal instead of creating one', async () => {
      const r = cli('verify', '--url', db.url);
      expect(r).toEqual({ status: 1, out: `brainstem: no journal at ${db.url}\n` });
      expect(await db.sql(`SELECT to_regclass('brainstem_migrations') AS t`)).toEqual([{ t: null }]);
    });

    it('verifies, replays and tails while a node has the journal open', async () => {
      const journal = await openPgJournal(db.url);
      try {
        for (let i = 1; i <= 25; i++) await journal.append(`s${i % 3}`, [{ type: 'test.event', data: { i } }]);
        const verify = cli('verify', '--url', db.url);
        expect(verify.status).toBe(0);
        expect(verify.out).toMatch(/^ok: 25 events verified; head seq 25/);
        const replay = cli('replay', '--url', db.url);
        expect(replay.out.trim().split('\n')).toHaveLength(26);
        expect(replay.out).toMatch(/^\s*1\s+\S+Z\s+s1@1\s+test\.event\s+\{"i":1\}$/m);
        const tail = cli('tail', '--url', db.url, '-n', '3');
        expect(tail.out.trim().split('\n').map((l) => l.trim().split(/\s+/)[0])).toEqual(['23', '24', '25', '--']);
        // Without --url or --dir, the database the service is configured with.
        expect(cliWith({ BRAINSTEM_JOURNAL_URL: db.url }, 'verify').out).toMatch(/^ok: 25 events verified; head seq 25/);
      } finally {
        await journal.close();
      }
    });

    it('names the URL without its password', () => {
      const r = cli('verify', '--url', 'postgresql://someone:s3cret@127.0.0.1:1/nowhere');
      expect(r.status).toBe(1);
      expect(r.out).toContain('brainstem: cannot reach the journal database postgresql://someone:***@127.0.0.1:1/nowhere: ');
      expect(r.out).not.toContain('s3cret');
    });
  });
});
