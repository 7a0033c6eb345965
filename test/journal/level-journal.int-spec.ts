import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { journalContract } from './journal.contract';
import { EventJournal } from '../../src/journal/event-journal';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { JournalEvent } from '../../src/journal/journal.port';
import { fullRecord, HASH_LEN, isChained, recordBody } from '../../src/journal/journal.storage';
import { LevelStorage } from '../../src/journal/level.storage';
import { editStoredEvent, tamper } from '../support/stored-events';
import { tempDir } from '../support/temp-dir';

journalContract('LevelDB', async () => {
  const dir = tempDir('brainstem-journal-');
  return { open: (options) => openLevelJournal(dir.path, options), cleanup: async () => dir.remove() };
});

describe('LevelDB journal: the head witness file', () => {
  const witnessSeq = (dir: string) => {
    const m = /^(\d{16}) /.exec(readFileSync(join(dir, 'HEAD'), 'utf8'));
    return m ? Number(m[1]) : 0;
  };

  it('never runs ahead of the acknowledged head while appends run, and equals it once closed', async () => {
    const dir = tempDir('brainstem-witness-');
    const journal = await openLevelJournal(dir.path);
    try {
      let acknowledged = 0;
      const appenders = Array.from({ length: 16 }, async (_, w) => {
        for (let i = 0; i < 40; i++) {
          const res = await journal.append(`s-${w}`, [{ type: 'x.y', data: { i } }]);
          acknowledged = Math.max(acknowledged, res.events[0].seq);
          if (existsSync(join(dir.path, 'HEAD'))) expect(witnessSeq(dir.path)).toBeLessThanOrEqual(journal.head().seq);
        }
      });
      await Promise.all(appenders);
      expect(acknowledged).toBe(640);
      await journal.close();
      expect(witnessSeq(dir.path)).toBe(640);
    } finally {
      dir.remove();
    }
  });
});

describe('LevelDB journal: stored layout', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir('brainstem-layout-')));
  afterEach(() => dir.remove());

  const streams = ['a', 'b', 'c'];
  /** A stored segment's records, each in the full form (as every record was stored before chained records). */
  const fullRecords = (segment: string): string[] => {
    let prev = '';
    return segment.split('\n').map((record) => {
      const full = isChained(record) ? fullRecord(record.slice(0, HASH_LEN), prev, record.slice(HASH_LEN)) : record;
      prev = record.slice(0, HASH_LEN);
      return full;
    });
  };
  /** 100 events in appends of 1 to 4 over three streams. */
  async function writeHistory(checkpointEvery = 25): Promise<Map<string, JournalEvent[]>> {
    const journal = await openLevelJournal(dir.path, { checkpointEvery });
    for (let i = 0; i < 40; i++) {
      await journal.append(streams[i % 3], Array.from({ length: 1 + (i % 4) }, (_, j) => ({ type: 'test.event', data: { i, j } })));
    }
    const reads = new Map<string, JournalEvent[]>();
    for (const s of streams) reads.set(s, await journal.readStream(s));
    await journal.close();
    return reads;
  }

  /** Rewrites the store the way journals were kept before segments: one key per event, one index key per event. */
  async function toLegacyLayout(): Promise<void> {
    await tamper(dir.path, async (db) => {
      const b = db.batch();
      // Deletes first: within one batch the later operation on a key wins.
      for (const key of await db.keys({ gte: 'i!', lt: 'i"' }).all()) b.del(key);
      for (const [key, value] of await db.iterator({ gte: 'g!', lt: 'g"' }).all()) {
        b.del(key);
        for (const record of fullRecords(value)) {
          const e = JSON.parse(recordBody(record)) as JournalEvent;
          b.put('e!' + String(e.seq).padStart(16, '0'), record);
          b.put(`i!${e.stream}!` + String(e.version).padStart(10, '0'), String(e.seq));
        }
      }
      await b.write();
    });
  }

  it('given a journal written one key per event, opens it converted into segments with the same history', async () => {
    const before = await writeHistory();
    await toLegacyLayout();
    const journal = await openLevelJournal(dir.path, { checkpointEvery: 25 });
    try {
      expect(await journal.verify()).toMatchObject({ ok: true, checked: 100 });
      for (const s of streams) expect(await journal.readStream(s)).toEqual(before.get(s));
      const res = await journal.append('a', [{ type: 'test.after' }], { expectedVersion: before.get('a')!.length });
      expect(res.events[0].seq).toBe(101);
    } finally {
      await journal.close();
    }
    await tamper(dir.path, async (db) => expect(await db.keys({ gte: 'e!', lt: 'e"' }).all()).toEqual([]));
  });

  it('stores the first record of each segment in full and the rest chained, and reads every event by scan and on its own alike', async () => {
    // Given 40 appends of 1 to 4 events, each its own group, so each its own segment
    const byStream = await writeHistory();
    await tamper(dir.path, async (db) => {
      const segments = await db.values({ gte: 'g!', lt: 'g"' }).all();
      const expected = Array.from({ length: 40 }, (_, i) => Array.from({ length: 1 + (i % 4) }, (_, j) => j > 0));
      expect(segments.map((value) => value.split('\n').map(isChained))).toEqual(expected);
    });
    const journal = await openLevelJournal(dir.path, { checkpointEvery: 25 });
    try {
      const scanned = await journal.readAll(0, 1000);
      for (const s of streams) expect(scanned.filter((e) => e.stream === s)).toEqual(byStream.get(s));
      // a@7 is seq 15, the second record of the segment holding 14-16: a snapshot reads it on its own
      expect(byStream.get('a')![6].seq).toBe(15);
      await journal.saveSnapshot('a', { version: 7, state: { n: 7 } });
      expect(await journal.loadSnapshot('a')).toMatchObject({ version: 7, seq: 15, state: { n: 7 } });
      expect(await journal.readAll(14, 2)).toEqual(scanned.slice(14, 16));
    } finally {
      await journal.close();
    }
  });

  it('given a journal stored before chained records (every record in full), opens it and reads the same history', async () => {
    const before = await writeHistory();
    await tamper(dir.path, async (db) => {
      for (const [key, value] of await db.iterator({ gte: 'g!', lt: 'g"' }).all()) await db.put(key, fullRecords(value).join('\n'));
    });
    const journal = await openLevelJournal(dir.path, { checkpointEvery: 25 });
    try {
      expect(await journal.verify()).toMatchObject({ ok: true, checked: 100 });
      for (const s of streams) expect(await journal.readStream(s)).toEqual(before.get(s));
      await journal.append('a', [{ type: 'test.after' }], { expectedVersion: before.get('a')!.length });
      expect(await journal.verify()).toMatchObject({ ok: true, checked: 101 });
    } finally {
      await journal.close();
    }
  });

  it('given the hash of a chained record altered, open refuses naming its seq', async () => {
    await writeHistory(1000);
    // seq 15 is the second record of the segment holding 14-16
    await editStoredEvent(dir.path, 15, (segment) => {
      const records = segment.split('\n');
      records[1] = (records[1][0] === 'a' ? 'b' : 'a') + records[1].slice(1);
      return records.join('\n');
    });
    await expect(openLevelJournal(dir.path)).rejects.toThrow(/corrupt at seq 15\b/);
  });

  it('given an event after the checkpoint that is not JSON, boot refuses, and an offline open can still verify', async () => {
    // Given the last checkpoint at seq 90, and the append of seqs 94-96 damaged
    await writeHistory(30);
    await editStoredEvent(dir.path, 95, (segment) => segment.replace(/\{"at"/g, '{"at'));
    await expect(openLevelJournal(dir.path, { checkpointEvery: 30 })).rejects.toThrow(/corrupt at seq 94\b/);
    const offline = await EventJournal.open(new LevelStorage(dir.path, { sync: true }), { verifyOnOpen: 'none' });
    try {
      const report = await offline.verify();
      expect(report).toMatchObject({ ok: false, first_bad_seq: 94 });
      await expect(offline.readStream('a')).rejects.toThrow(new RegExp(`corrupt at seq ${report.first_bad_seq}\\b`));
    } finally {
      await offline.close();
    }
  });
});
