import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { journalContract } from './journal.contract';
import { EventJournal } from '../../src/journal/event-journal';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { JournalEvent } from '../../src/journal/journal.port';
import { chainHash } from '../../src/journal/canonical-json';
import { bodyOffset, carriesPrevHash, chainedRecord, fullRecord, HASH_LEN, ownHashLength, recordBody } from '../../src/journal/journal.storage';
import { LEVEL_SCHEMA_VERSION, LevelStorage } from '../../src/journal/level.storage';
import { JournalError } from '../../src/journal/journal.port';
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

describe('LevelDB journal: the head witness of the last commit', () => {
  it('is written soon after the commit even when no other write follows and the journal stays open', async () => {
    const dir = tempDir('brainstem-witness-idle-');
    const journal = await openLevelJournal(dir.path);
    try {
      await journal.append('s', [{ type: 'x.y' }]);
      await journal.append('s', [{ type: 'x.y' }]);
      const deadline = Date.now() + 5000;
      const witnessed = () => existsSync(join(dir.path, 'HEAD')) && readFileSync(join(dir.path, 'HEAD'), 'utf8').startsWith('0000000000000002 ');
      while (!witnessed() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(readFileSync(join(dir.path, 'HEAD'), 'utf8')).toBe(`0000000000000002 ${journal.head().hash}\n`);
    } finally {
      await journal.close();
      dir.remove();
    }
  });
});

describe('LevelDB journal: the versions of many streams, looked up at once', () => {
  it('checks an append over several streams against each one, whether few or many index keys lie between them', async () => {
    // Given 1,500 streams with an event each (s-0700 three), most behind checkpoints, and a reopen (no version is known)
    const dir = tempDir('brainstem-versions-');
    let journal = await openLevelJournal(dir.path, { checkpointEvery: 100 });
    try {
      const names = Array.from({ length: 1500 }, (_, i) => `s-${String(i).padStart(4, '0')}`);
      for (let from = 0; from < names.length; from += 100) {
        await Promise.all(names.slice(from, from + 100).map((s) => journal.append(s, [{ type: 'x.made' }])));
      }
      await journal.append('s-0700', [{ type: 'x.more' }, { type: 'x.more' }]);
      const reopen = async () => {
        await journal.close();
        journal = await openLevelJournal(dir.path, { checkpointEvery: 100 });
      };
      const append = (streams: Array<[string, number]>) =>
        journal.appendAll(streams.map(([stream, expectedVersion]) => ({ stream, events: [{ type: 'x.next' }], expectedVersion })));
      await reopen();
      const head = journal.head();

      // When the streams named lie close together (few keys between them), Then each is checked, and a stale one named
      await expect(append([['s-0700', 2], ['s-0701', 1], ['s-0700a', 0]])).rejects.toMatchObject({ code: 'journal_conflict', stream: 's-0700', actual: 3 });
      await reopen();
      // And when they lie far apart (every other stream's keys between them), Then too
      await expect(append([['s-0000', 1], ['s-0700', 3], ['s-1499', 0], ['t-new', 0]])).rejects.toMatchObject({ code: 'journal_conflict', stream: 's-1499', actual: 1 });
      expect(journal.head()).toEqual(head);
      await reopen();
      expect((await append([['s-0000', 1], ['s-0700', 3], ['s-1499', 1], ['t-new', 0]])).map((r) => r.version)).toEqual([2, 4, 2, 1]);
      await reopen();
      expect((await append([['s-0700', 4], ['s-0701', 1], ['s-0700a', 0]])).map((r) => r.version)).toEqual([5, 2, 1]);
      expect(await journal.verify()).toMatchObject({ ok: true, checked: 1502 + 4 + 3 });
    } finally {
      await journal.close();
      dir.remove();
    }
  });
});

describe('LevelDB journal: stored layout', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir('brainstem-layout-')));
  afterEach(() => dir.remove());

  const streams = ['a', 'b', 'c'];
  const formOf = (record: string) => ({ 8: 'checked', 64: 'chained', 128: 'full' })[bodyOffset(record)];
  /**
   * A stored segment rewritten with every record in the form `form` names for its index, as earlier
   * versions stored them: 'full' for all (before chained records), 'chained' after the first (before checks).
   */
  const rewriteSegment = (segment: string, form: (i: number) => 'full' | 'chained'): string => {
    let prev = '';
    return segment
      .split('\n')
      .map((record, i) => {
        const at = bodyOffset(record);
        const body = record.slice(at);
        if (carriesPrevHash(at)) prev = record.slice(ownHashLength(at), at);
        const hash = ownHashLength(at) === HASH_LEN ? record.slice(0, HASH_LEN) : chainHash(prev, body);
        const out = form(i) === 'full' ? fullRecord(hash, prev, body) : chainedRecord(hash, body);
        prev = hash;
        return out;
      })
      .join('\n');
  };
  const allFull = (segment: string) => rewriteSegment(segment, () => 'full');
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

  /** One append of 20 events to stream `long`: one segment. */
  async function writeOneSegment(): Promise<JournalEvent[]> {
    const journal = await openLevelJournal(dir.path);
    const { events } = await journal.append('long', Array.from({ length: 20 }, (_, i) => ({ type: 'test.event', data: { i } })));
    await journal.close();
    return events;
  }
  /** Rewrites the stored record of the event at seq (record seq - 1 of the one segment) through `edit`. */
  const editRecord = (seq: number, edit: (record: string) => string) =>
    editStoredEvent(dir.path, seq, (segment) => {
      const records = segment.split('\n');
      records[seq - 1] = edit(records[seq - 1]);
      return records.join('\n');
    });
  const flip = (c: string) => (c === 'a' ? 'b' : 'a');

  /** Rewrites the store the way journals were kept before segments: one key per event, one index key per event. */
  async function toLegacyLayout(): Promise<void> {
    await tamper(dir.path, async (db) => {
      const b = db.batch();
      // Deletes first: within one batch the later operation on a key wins. That layout had no schema version.
      b.del('m!schema');
      for (const key of await db.keys({ gte: 'i!', lt: 'i"' }).all()) b.del(key);
      for (const [key, value] of await db.iterator({ gte: 'g!', lt: 'g"' }).all()) {
        b.del(key);
        for (const record of allFull(value).split('\n')) {
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
    await tamper(dir.path, async (db) => {
      expect(await db.keys({ gte: 'e!', lt: 'e"' }).all()).toEqual([]);
      // The older schema (version 1) was upgraded on open: the layout's version is now this release's.
      expect(await db.get('m!schema')).toBe(String(LEVEL_SCHEMA_VERSION));
    });
  });

  it('given a journal of a newer schema version, refuses to open it, naming both versions, and writes nothing to it', async () => {
    const before = await writeHistory();
    await tamper(dir.path, (db) => db.put('m!schema', String(LEVEL_SCHEMA_VERSION + 1)));
    const refused = await openLevelJournal(dir.path).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(JournalError);
    expect(refused).toMatchObject({ code: 'journal_schema_mismatch' });
    expect((refused as Error).message).toContain(`has schema version ${LEVEL_SCHEMA_VERSION + 1}, newer than this Brainstem's (${LEVEL_SCHEMA_VERSION})`);
    await tamper(dir.path, async (db) => expect(await db.get('m!schema')).toBe(String(LEVEL_SCHEMA_VERSION + 1)));
    // Set back to this release's version, the same journal opens with its history whole.
    await tamper(dir.path, (db) => db.put('m!schema', String(LEVEL_SCHEMA_VERSION)));
    const journal = await openLevelJournal(dir.path);
    try {
      for (const s of streams) expect(await journal.readStream(s)).toEqual(before.get(s));
    } finally {
      await journal.close();
    }
  });

  it('stores the first record of each segment in full and the rest checked, and reads every event by scan and on its own alike', async () => {
    // Given 40 appends of 1 to 4 events, each its own group, so each its own segment
    const byStream = await writeHistory();
    await tamper(dir.path, async (db) => {
      const segments = await db.values({ gte: 'g!', lt: 'g"' }).all();
      const expected = Array.from({ length: 40 }, (_, i) => Array.from({ length: 1 + (i % 4) }, (_, j) => (j === 0 ? 'full' : 'checked')));
      expect(segments.map((value) => value.split('\n').map(formOf))).toEqual(expected);
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

  it('keeps the whole hash of every eighth record of a segment, and reads each record on its own from the one before it', async () => {
    // Given one append of 20 events: one segment
    const appended = await writeOneSegment();
    await tamper(dir.path, async (db) => {
      const [segment] = await db.values({ gte: 'g!', lt: 'g"' }).all();
      const forms = segment.split('\n').map(formOf);
      expect(forms).toEqual(Array.from({ length: 20 }, (_, i) => (i === 0 ? 'full' : i % 8 === 0 ? 'chained' : 'checked')));
    });
    const reopened = await openLevelJournal(dir.path);
    try {
      expect(await reopened.readAll(0, 100)).toEqual(appended);
      // Each read on its own: a snapshot's version is checked against its event, read by seq
      for (const version of [2, 8, 9, 16, 20]) {
        await reopened.saveSnapshot('long', { version, state: { version } });
        expect(await reopened.loadSnapshot('long')).toMatchObject({ version, seq: version, state: { version } });
        expect(await reopened.readAll(version - 1, 1)).toEqual([appended[version - 1]]);
      }
      expect(await reopened.readStream('long', 13, 3)).toEqual(appended.slice(12, 15));
    } finally {
      await reopened.close();
    }
  });

  it('given the check of a checked record altered, open refuses naming its seq, and so does a read of it on its own', async () => {
    await writeOneSegment();
    // seq 12 is record 11: checked, after the anchor at record 8
    await editRecord(12, (record) => flip(record[0]) + record.slice(1));
    await expect(openLevelJournal(dir.path)).rejects.toThrow(/corrupt at seq 12\b/);
    const offline = await EventJournal.open(new LevelStorage(dir.path, { sync: true }), { verifyOnOpen: 'none' });
    try {
      expect(await offline.verify()).toMatchObject({ ok: false, first_bad_seq: 12 });
      await expect(offline.readStream('long', 12, 1)).rejects.toThrow(/corrupt at seq 12\b/);
      expect((await offline.readStream('long', 13, 1))[0].seq).toBe(13);
    } finally {
      await offline.close();
    }
  });

  for (const [name, form] of [
    ['before chained records (every record in full)', () => 'full' as const],
    ['before checked records (the first in full, the rest chained)', (i: number) => (i === 0 ? ('full' as const) : ('chained' as const))],
  ] as const) {
    it(`given a journal stored ${name}, opens it and reads the same history`, async () => {
      const before = await writeHistory();
      await tamper(dir.path, async (db) => {
        for (const [key, value] of await db.iterator({ gte: 'g!', lt: 'g"' }).all()) await db.put(key, rewriteSegment(value, form));
      });
      const journal = await openLevelJournal(dir.path, { checkpointEvery: 25 });
      try {
        expect(await journal.verify()).toMatchObject({ ok: true, checked: 100 });
        for (const s of streams) expect(await journal.readStream(s)).toEqual(before.get(s));
        expect(await journal.loadSnapshot('a')).toBeNull();
        await journal.saveSnapshot('a', { version: 7, state: { n: 7 } });
        expect(await journal.loadSnapshot('a')).toMatchObject({ version: 7, seq: 15 });
        await journal.append('a', [{ type: 'test.after' }], { expectedVersion: before.get('a')!.length });
        expect(await journal.verify()).toMatchObject({ ok: true, checked: 101 });
      } finally {
        await journal.close();
      }
    });
  }

  it('given the hash of a chained record (an anchor) altered, open refuses naming its seq', async () => {
    await writeOneSegment();
    // seq 9 is record 8, the second anchor of the segment
    await editRecord(9, (record) => record.slice(0, 40) + flip(record[40]) + record.slice(41));
    await expect(openLevelJournal(dir.path)).rejects.toThrow(/corrupt at seq 9\b/);
  });

  it('given one byte of the event in a checked record altered, open refuses naming its seq', async () => {
    await writeOneSegment();
    await editStoredEvent(dir.path, 6, (segment) => segment.replace('{"i":5}', '{"i":7}'));
    await expect(openLevelJournal(dir.path)).rejects.toThrow(/corrupt at seq 6\b/);
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
