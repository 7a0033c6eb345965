import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { JournalCorruptError, JournalError, JournalHead } from './journal.port';
import { chainHash } from './canonical-json';
import {
  ANCHOR_EVERY,
  bodyOffset,
  carriesPrevHash,
  chainedRecord,
  checkedRecord,
  Checkpoint,
  CommitBatch,
  fullRecord,
  HASH_LEN,
  JournalStorage,
  ownHashLength,
  recordBody,
} from './journal.storage';

// Key layout (utf8, sorted; '"' is the code point after '!', closing each range):
//   g!<last seq>                 a segment: the records of up to SEGMENT_EVENTS consecutive events, '\n'-joined
//                                (a record is hashes and canonical JSON, so it never holds a newline); the
//                                first is full, every ANCHOR_EVERYth chained, the others checked (see
//                                journal.storage: a checked record is 120 bytes shorter than a full one)
//   i!<stream>!<last version>    a run of the stream index: the seqs of consecutive versions, ','-joined
//   m!head, m!checkpoint, m!schema (the layout's version), n!<stream> (snapshot), and e!<seq> in journals written
//   before segments (version 1, which has no m!schema).
// One value per group of events instead of two keys per event: LevelDB's cost is mostly per key, and the
// index, which replay can rebuild, is written in runs at checkpoints instead of one key per event.
export const segmentKey = (lastSeq: number) => 'g!' + String(lastSeq).padStart(16, '0');
const indexKey = (stream: string, version: number) => `i!${stream}!` + String(version).padStart(10, '0');
/** streamVersions reads the index keys between the streams asked for while there are at most this many (or twice the streams). */
const RANGE_KEYS_MIN = 1000;
const RANGE_PAGE = 1000;
const HEAD = 'm!head';
const CHECKPOINT = 'm!checkpoint';
const SCHEMA = 'm!schema';
/** The layout this release writes: 1 was one key per event, 2 is segments. */
export const LEVEL_SCHEMA_VERSION = 2;
const SEGMENT_EVENTS = 64;
const SEGMENT_CHARS = 64 * 1024;

/** A stored segment, opened: record i is the event at seq first + i. */
interface Segment {
  first: number;
  last: number;
  records: string[];
}

function openSegment(key: string, value: string): Segment {
  const last = Number(key.slice(2));
  const records = value.split('\n');
  return { first: last - records.length + 1, last, records };
}

/**
 * Record i of a segment in a form that carries its prev hash, for a read on its own: the prev hash is rebuilt
 * from the nearest record before it that keeps its whole hash, at most ANCHOR_EVERY - 1 hashes away. The
 * records in between are not checked here; the reader checks record i against its own hash or check, and
 * every sequential walk checks them all.
 */
function recordWithPrevAt(segment: Segment, i: number): string | undefined {
  const record = segment.records[i];
  if (record === undefined) return undefined;
  const at = bodyOffset(record);
  if (carriesPrevHash(at)) return record;
  let j = i - 1;
  while (j >= 0 && ownHashLength(bodyOffset(segment.records[j])) !== HASH_LEN) j--;
  // No record before it keeps a whole hash: the segment is damaged; the reader reports the missing prev hash.
  if (j < 0) return record;
  let prev = segment.records[j].slice(0, HASH_LEN);
  for (let k = j + 1; k < i; k++) prev = chainHash(prev, recordBody(segment.records[k]));
  const own = ownHashLength(at);
  return record.slice(0, own) + prev + record.slice(own);
}

/** The index entries of the events after the last checkpoint, kept in memory until the next one writes them. */
interface TailRun {
  first: number;
  seqs: number[];
}

/** Fixed-size record, rewritten in place: `<seq, 16 digits> <hash>\n`. */
const WITNESS_LEN = 16 + 1 + 64 + 1;
/** How long a durable head waits, at most, for the next commit to write its witness before it is written on its own. */
const WITNESS_DELAY_MS = 1;
/** The free space a reopen after a failed write needs at least (its recovery writes the log's tail out as a table). */
const RECOVERY_SPACE = 1 << 20;

/**
 * LevelDB storage through classic-level. Nothing LevelDB-specific leaves this file.
 *
 * LevelDB recovers a damaged log by silently dropping the damaged record and everything after it, which
 * leaves a shorter but self-consistent chain. So after each durable commit the head is also written to a
 * witness file beside the database (no fsync: it is written only after the batch is durable, so it is
 * never ahead of the data); on open, a database behind its witness has lost acknowledged events.
 * It is written (a pwrite of 82 bytes, no fsync) once the next batch's write is under way, while the event loop
 * would only wait, or WITNESS_DELAY_MS after its commit if none follows: it may trail the data a little (a lower
 * bound is still a valid witness). Written right after each commit, it sat between one group's durable write and
 * the next one's submission, where 64 closed-loop appenders wait for every microsecond: synchronously, about a
 * tenth of their throughput; handed to libuv's pool, about 10 µs a group. Handed to the pool while the next write
 * runs, its wake-up slowed the hand-over of that write by about as much (bench/journal-appenders.ts profiles).
 */
export class LevelStorage implements JournalStorage {
  readonly location: string;
  readonly syncedCommits: boolean;
  private readonly db: ClassicLevel<string, string>;
  private readonly witnessPath: string;
  private witnessFd: number | null = null;
  private witnessNext: JournalHead | null = null;
  private readonly witnessBuffer = Buffer.alloc(WITNESS_LEN);
  private witnessError: Error | null = null;
  private witnessTimer: NodeJS.Timeout | null = null;
  private tail = new Map<string, TailRun>();
  /** Set when the events after the checkpoint could not be indexed; stream reads then refuse, naming the seq. */
  private tailDamage: JournalCorruptError | null = null;
  /**
   * A write that failed (a full disk): LevelDB may have left part of it at the end of its log and would append the
   * next writes after that torn record, which its recovery then drops with them. Nothing is written until the database
   * has been closed and opened again: its recovery ends the log at the last whole record and starts a new one.
   */
  private writeFailure: Error | null = null;

  constructor(
    dir: string,
    private readonly options: { sync: boolean },
  ) {
    this.location = join(dir, 'db');
    this.syncedCommits = options.sync;
    this.witnessPath = join(dir, 'HEAD');
    mkdirSync(dir, { recursive: true });
    this.db = new ClassicLevel<string, string>(this.location, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  }

  async open(): Promise<void> {
    try {
      await this.db.open();
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause;
      if (cause?.code === 'LEVEL_LOCKED') {
        throw new JournalError(
          'journal_locked',
          `the journal at ${this.location} is locked by another process (a running Brainstem server?); stop it first, or use its HTTP API`,
        );
      }
      throw e;
    }
    await this.upgradeSchema();
    await this.indexTail();
  }

  /**
   * A journal of a newer layout is refused before anything is written to it (a newer release made it); an older one
   * is converted here: a LevelDB journal has one process, so no other node runs on the old layout meanwhile.
   */
  private async upgradeSchema(): Promise<void> {
    const marked = await this.db.get(SCHEMA);
    const found = marked === undefined ? 1 : Number(marked);
    if (!(Number.isInteger(found) && found >= 1 && found <= LEVEL_SCHEMA_VERSION)) {
      await this.db.close();
      throw new JournalError(
        'journal_schema_mismatch',
        `the journal at ${this.location} has schema version ${marked}, newer than this Brainstem's (${LEVEL_SCHEMA_VERSION}): a newer release wrote it, so this one cannot run on it; run that release or a later one (docs/operations/backup-and-upgrades.md)`,
      );
    }
    await this.convertLegacyEvents();
    if (found !== LEVEL_SCHEMA_VERSION) await this.db.put(SCHEMA, String(LEVEL_SCHEMA_VERSION), { sync: true });
  }

  /**
   * Journals written before segments hold one e!<seq> key per event (and one index key per event, which are
   * runs of one). Rewritten into segments in seq order, a few thousand per atomic batch, so a conversion
   * cut short resumes on the next open.
   */
  private async convertLegacyEvents(): Promise<void> {
    for (;;) {
      const entries = await this.db.iterator({ gte: 'e!', lt: 'e"', limit: 4096 }).all();
      if (entries.length === 0) return;
      const b = this.db.batch();
      // A segment holds consecutive seqs only, so an event missing from the old layout stays missing.
      let records: string[] = [];
      for (let i = 0; i < entries.length; i++) {
        const [key, record] = entries[i];
        const seq = Number(key.slice(2));
        records.push(record);
        b.del(key);
        const next = entries[i + 1];
        if (!next || Number(next[0].slice(2)) !== seq + 1 || records.length === SEGMENT_EVENTS) {
          b.put(segmentKey(seq), records.join('\n'));
          records = [];
        }
      }
      await b.write({ sync: true });
    }
  }

  /**
   * Rebuilds the in-memory index of the events after the last checkpoint (the ones boot re-verifies anyway).
   * An event that cannot be indexed is noted, not thrown: offline tools still open the journal to verify it.
   */
  private async indexTail(): Promise<void> {
    const checkpoint = await this.db.get(CHECKPOINT);
    let expected = checkpoint ? (JSON.parse(checkpoint) as Checkpoint).seq + 1 : 1;
    try {
      for await (const page of this.scanRecords(expected, Number.MAX_SAFE_INTEGER, 4096)) {
        for (const record of page) {
          const e = JSON.parse(recordBody(record)) as { seq: unknown; stream: unknown; version: unknown };
          if (e.seq !== expected || typeof e.stream !== 'string' || typeof e.version !== 'number') throw new Error('not the expected event');
          const run = this.tail.get(e.stream);
          if (!run) this.tail.set(e.stream, { first: e.version, seqs: [expected] });
          else if (e.version === run.first + run.seqs.length) run.seqs.push(expected);
          else throw new Error('stream version out of order');
          expected++;
        }
      }
    } catch {
      this.tailDamage = new JournalCorruptError(expected, 'event cannot be indexed');
    }
  }

  private throwIfTailDamaged(): void {
    if (this.tailDamage) throw this.tailDamage;
  }

  async close(): Promise<void> {
    if (this.witnessTimer) clearTimeout(this.witnessTimer);
    this.witnessTimer = null;
    // The last durable head is written before the file is closed.
    this.flushWitness();
    if (this.witnessFd !== null) closeSync(this.witnessFd);
    this.witnessFd = null;
    await this.db.close();
  }

  async readMeta() {
    const [head, checkpoint] = await this.db.getMany([HEAD, CHECKPOINT]);
    return {
      head: head ? (JSON.parse(head) as JournalHead) : null,
      checkpoint: checkpoint ? (JSON.parse(checkpoint) as Checkpoint) : null,
      witness: this.readWitness(),
    };
  }

  private readWitness(): JournalHead | null {
    if (!existsSync(this.witnessPath)) return null;
    const m = /^(\d{16}) ([0-9a-f]{64})\n$/.exec(readFileSync(this.witnessPath, 'utf8'));
    return m ? { seq: Number(m[1]), hash: m[2] } : null;
  }

  /** Notes a durable head; it is written when the next write is under way, or soon after if none comes. */
  private noteWitness(head: JournalHead): void {
    if (this.witnessFd === null) this.witnessFd = openSync(this.witnessPath, existsSync(this.witnessPath) ? 'r+' : 'w');
    this.witnessNext = head;
    if (this.witnessTimer) return;
    this.witnessTimer = setTimeout(this.witnessDue, WITNESS_DELAY_MS);
    this.witnessTimer.unref();
  }

  private readonly witnessDue = (): void => {
    this.witnessTimer = null;
    this.flushWitness();
  };

  private readonly flushWitness = (): void => {
    const head = this.witnessNext;
    if (!head || this.witnessFd === null) return;
    this.witnessNext = null;
    this.witnessBuffer.write(`${String(head.seq).padStart(16, '0')} ${head.hash}\n`, 0, 'latin1');
    try {
      writeSync(this.witnessFd, this.witnessBuffer, 0, WITNESS_LEN, 0);
    } catch (e) {
      this.witnessError = e as Error;
    }
  };

  async lastSeq(): Promise<number> {
    const keys = await this.db.keys({ gte: 'g!', lt: 'g"', reverse: true, limit: 1 }).all();
    return keys.length ? Number(keys[0].slice(2)) : 0;
  }

  async streamVersion(stream: string): Promise<number> {
    this.throwIfTailDamaged();
    const run = this.tail.get(stream);
    if (run) return run.first + run.seqs.length - 1;
    const prefix = `i!${stream}!`;
    const keys = await this.db.keys({ gte: prefix, lt: prefix + '\uffff', reverse: true, limit: 1 }).all();
    return keys.length ? Number(keys[0].slice(prefix.length)) : 0;
  }

  async streamVersions(streams: readonly string[]): Promise<Map<string, number>> {
    this.throwIfTailDamaged();
    const versions = new Map<string, number>();
    const wanted = new Set<string>();
    for (const stream of streams) {
      const run = this.tail.get(stream);
      if (run) versions.set(stream, run.first + run.seqs.length - 1);
      else wanted.add(stream);
    }
    if (wanted.size === 0) return versions;
    const sorted = [...wanted].sort();
    // The index keys from the first stream's to the last's, read a page at a time (streams begun together, a scan's
    // profiles say, are mostly new and near each other): a few reads rather than one per stream. When the range holds
    // many more keys than streams are asked for, each stream is looked up on its own instead.
    const found = await this.indexRange(`i!${sorted[0]}!`, `i!${sorted[sorted.length - 1]}!\uffff`, Math.max(RANGE_KEYS_MIN, 2 * sorted.length), wanted);
    if (found) {
      for (const stream of sorted) versions.set(stream, found.get(stream) ?? 0);
      return versions;
    }
    // One iterator moved from stream to stream (each one's highest index key, last first), rather than an iterator
    // opened, read and closed per stream.
    const it = this.db.keys({ gte: 'i!', lt: 'i"', reverse: true });
    try {
      for (const stream of sorted.reverse()) {
        const prefix = `i!${stream}!`;
        it.seek(prefix + '\uffff');
        const key = await it.next();
        versions.set(stream, key !== undefined && key.startsWith(prefix) ? Number(key.slice(prefix.length)) : 0);
      }
    } finally {
      await it.close();
    }
    return versions;
  }

  /** The highest indexed version of each wanted stream whose keys lie in [gte, lt); null when the range holds more than `most` keys. */
  private async indexRange(gte: string, lt: string, most: number, wanted: ReadonlySet<string>): Promise<Map<string, number> | null> {
    const found = new Map<string, number>();
    const it = this.db.keys({ gte, lt });
    try {
      for (let read = 0; read <= most; ) {
        const page = await it.nextv(RANGE_PAGE);
        if (page.length === 0) return found;
        read += page.length;
        for (const key of page) {
          // i!<stream>!<version>: a stream name holds no "!".
          const bang = key.lastIndexOf('!');
          const stream = key.slice(2, bang);
          if (wanted.has(stream)) found.set(stream, Math.max(found.get(stream) ?? 0, Number(key.slice(bang + 1))));
        }
      }
      return null;
    } finally {
      await it.close();
    }
  }

  async commit(batch: CommitBatch): Promise<void> {
    // A witness that cannot be written can no longer vouch for acknowledged events: stop acknowledging.
    if (this.witnessError) throw this.unwritable(this.witnessError);
    if (this.writeFailure) await this.reopenAfterFailure();
    // The chained form: several times cheaper per op than db.batch(array) in classic-level.
    const b = this.db.batch();
    const { events } = batch;
    for (let from = 0; from < events.length; ) {
      const first = events[from];
      let value = fullRecord(first.hash, first.prevHash, first.body);
      let to = from + 1;
      for (; to < events.length && to - from < SEGMENT_EVENTS && value.length < SEGMENT_CHARS; to++) {
        const e = events[to];
        value += '\n' + ((to - from) % ANCHOR_EVERY === 0 ? chainedRecord(e.hash, e.body) : checkedRecord(e.hash, e.body));
      }
      b.put(segmentKey(events[to - 1].seq), value);
      from = to;
    }
    const tail = batch.checkpoint ? new Map<string, TailRun>() : this.tail;
    if (batch.checkpoint) {
      for (const [stream, run] of this.tail) tail.set(stream, { first: run.first, seqs: [...run.seqs] });
      addToTail(tail, events);
      for (const [stream, run] of tail) b.put(indexKey(stream, run.first + run.seqs.length - 1), run.seqs.join(','));
      b.put(CHECKPOINT, JSON.stringify(batch.checkpoint));
    }
    b.put(HEAD, JSON.stringify(batch.head));
    const written = b.write({ sync: this.options.sync });
    // The previous commit's head, durable: its witness is written while this write is under way.
    this.flushWitness();
    try {
      await written;
    } catch (e) {
      this.writeFailure = e as Error;
      throw this.unwritable(e as Error);
    }
    if (batch.checkpoint) this.tail = new Map();
    else addToTail(tail, events);
    this.noteWitness(batch.head);
  }

  /** One iterator for the whole scan, with the next segments read while the caller works on the current page. */
  async *scanRecords(fromSeq: number, limit: number, pageSize: number): AsyncIterable<string[]> {
    const from = Math.max(1, fromSeq);
    const it = this.db.iterator({ gte: segmentKey(from), lt: 'g"' });
    const segmentsPerPage = Math.max(1, Math.ceil(pageSize / SEGMENT_EVENTS));
    let next = it.nextv(segmentsPerPage);
    let left = limit;
    try {
      while (left > 0) {
        const entries = await next;
        if (entries.length === 0) return;
        next = it.nextv(segmentsPerPage);
        const page: string[] = [];
        for (const [key, value] of entries) {
          const segment = openSegment(key, value);
          page.push(...segment.records.slice(Math.max(0, from - segment.first)));
        }
        if (page.length > left) page.length = left;
        left -= page.length;
        yield page;
      }
    } finally {
      // A caller that stops early leaves one prefetch in flight: settle it before closing.
      await next.catch(() => undefined);
      await it.close();
    }
  }

  async readRecord(seq: number): Promise<string | undefined> {
    const segment = await this.segmentHolding(seq);
    return segment && recordWithPrevAt(segment, seq - segment.first);
  }

  /** One iterator, sought to each segment in turn, for the seqs of a stream (mostly ascending). */
  async readRecordsAt(seqs: readonly number[]): Promise<Array<string | undefined>> {
    const out: Array<string | undefined> = [];
    if (seqs.length === 0) return out;
    const it = this.db.iterator({ gte: 'g!', lt: 'g"' });
    try {
      let segment: Segment | undefined;
      let prevSeq = -1;
      for (const seq of seqs) {
        if (!segment || seq < segment.first || seq > segment.last) {
          it.seek(segmentKey(seq));
          const entry = await it.next();
          segment = entry && openSegment(entry[0], entry[1]);
        }
        if (!segment || seq < segment.first) out.push(undefined);
        // Right after its predecessor, the stored form will do: the reader has just hashed the predecessor.
        else if (seq === prevSeq + 1 && out[out.length - 1] !== undefined) out.push(segment.records[seq - segment.first]);
        else out.push(recordWithPrevAt(segment, seq - segment.first));
        prevSeq = seq;
      }
    } finally {
      await it.close();
    }
    return out;
  }

  private async segmentHolding(seq: number): Promise<Segment | undefined> {
    const [entry] = await this.db.iterator({ gte: segmentKey(seq), lt: 'g"', limit: 1 }).all();
    return entry && openSegment(entry[0], entry[1]);
  }

  /**
   * Stored runs first, then the in-memory tail. Runs may overlap (a journal written before runs has one
   * key per event), so versions already given are skipped.
   */
  async streamSeqs(stream: string, fromVersion: number, limit: number) {
    this.throwIfTailDamaged();
    const from = Math.max(1, fromVersion);
    const out: Array<{ version: number; seq: number }> = [];
    const run = this.tail.get(stream);
    const storedEnd = run ? run.first - 1 : Number.MAX_SAFE_INTEGER;
    let last = from - 1;
    if (from <= storedEnd) {
      const prefix = `i!${stream}!`;
      const it = this.db.iterator({ gte: indexKey(stream, from), lt: prefix + '\uffff' });
      try {
        for (let entries = await it.nextv(16); entries.length > 0 && out.length < limit && last < storedEnd; entries = await it.nextv(16)) {
          for (const [key, value] of entries) {
            const seqs = value.split(',');
            const first = Number(key.slice(prefix.length)) - seqs.length + 1;
            for (let i = Math.max(0, last + 1 - first); i < seqs.length && out.length < limit && first + i <= storedEnd; i++) {
              out.push({ version: first + i, seq: Number(seqs[i]) });
              last = first + i;
            }
          }
        }
      } finally {
        await it.close();
      }
    }
    if (run) {
      for (let i = Math.max(0, last + 1 - run.first); i < run.seqs.length && out.length < limit; i++) {
        out.push({ version: run.first + i, seq: run.seqs[i] });
      }
    }
    return out;
  }

  /**
   * Not synced: a snapshot only shortens replay, and is written after the events it covers are durable, so a
   * crash can lose the newest one (boot replays a longer tail) but never leave one ahead of the events.
   */
  async putSnapshot(stream: string, text: string): Promise<void> {
    if (this.writeFailure) throw this.unwritable(this.writeFailure);
    try {
      await this.db.put('n!' + stream, text, { sync: false });
    } catch (e) {
      this.writeFailure = e as Error;
      throw this.unwritable(e as Error);
    }
  }

  /** A write refused for the disk (full, failing): 503 journal_unavailable, nothing of it acknowledged. */
  private unwritable(cause: Error): JournalError {
    return new JournalError('journal_unavailable', `the journal at ${this.location} cannot be written (${cause.message}): nothing of this write was kept; writes resume once the disk has space again`);
  }

  /**
   * Before the first write after a failed one: closed and opened again, which ends the log at its last whole record.
   * While the disk has too little space for that recovery, it is not tried (the database stays open for reads).
   */
  private async reopenAfterFailure(): Promise<void> {
    const failure = this.writeFailure as Error;
    const { bavail, bsize } = statfsSync(this.location);
    if (bavail * bsize < RECOVERY_SPACE) throw this.unwritable(failure);
    try {
      if (this.db.status === 'open') await this.db.close();
      await this.db.open();
    } catch (e) {
      throw this.unwritable(e as Error);
    }
    this.writeFailure = null;
  }

  async getSnapshot(stream: string): Promise<string | undefined> {
    return this.db.get('n!' + stream);
  }
}

function addToTail(tail: Map<string, TailRun>, events: CommitBatch['events']): void {
  for (const e of events) {
    const run = tail.get(e.stream);
    if (run) run.seqs.push(e.seq);
    else tail.set(e.stream, { first: e.version, seqs: [e.seq] });
  }
}
