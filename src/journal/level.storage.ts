import { closeSync, existsSync, mkdirSync, openSync, readFileSync, write } from 'node:fs';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { JournalError, JournalHead } from './journal.port';
import { Checkpoint, CommitBatch, JournalStorage } from './journal.storage';

// Key layout (utf8, sorted): e!<seq> event record, i!<stream>!<version> -> seq, m!head, m!checkpoint,
// n!<stream> snapshot. '"' is the code point after '!', closing each range. Two keys per event: a stream's
// version is its last index key, so it needs no key of its own.
export const eventKey = (seq: number) => 'e!' + String(seq).padStart(16, '0');
const indexKey = (stream: string, version: number) => `i!${stream}!` + String(version).padStart(10, '0');
const HEAD = 'm!head';
const CHECKPOINT = 'm!checkpoint';

/** Fixed-size record, rewritten in place: `<seq, 16 digits> <hash>\n`. */
const witnessRecord = (h: JournalHead) => Buffer.from(`${String(h.seq).padStart(16, '0')} ${h.hash}\n`);

/**
 * LevelDB storage through classic-level. Nothing LevelDB-specific leaves this file.
 *
 * LevelDB recovers a damaged log by silently dropping the damaged record and everything after it, which
 * leaves a shorter but self-consistent chain. So after each durable commit the head is also written to a
 * witness file beside the database (no fsync: it is written only after the batch is durable, so it is
 * never ahead of the data); on open, a database behind its witness has lost acknowledged events.
 * The write runs off the event loop, one at a time, always the newest head: it may trail the data by the
 * commits made while one write is under way (a lower bound is still a valid witness), and it no longer holds
 * up the commit path (written synchronously, it cost about a tenth of the 64-appender throughput).
 */
export class LevelStorage implements JournalStorage {
  readonly location: string;
  private readonly db: ClassicLevel<string, string>;
  private readonly witnessPath: string;
  private witnessFd: number | null = null;
  private witnessNext: JournalHead | null = null;
  private witnessWriting: Promise<void> | null = null;
  private witnessError: Error | null = null;

  constructor(
    dir: string,
    private readonly options: { sync: boolean },
  ) {
    this.location = join(dir, 'db');
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
  }

  async close(): Promise<void> {
    await this.witnessWriting;
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

  private writeWitness(head: JournalHead): void {
    if (this.witnessFd === null) this.witnessFd = openSync(this.witnessPath, existsSync(this.witnessPath) ? 'r+' : 'w');
    this.witnessNext = head;
    this.witnessWriting ??= this.drainWitness(this.witnessFd);
  }

  private async drainWitness(fd: number): Promise<void> {
    try {
      for (let head = this.witnessNext; head; head = this.witnessNext) {
        this.witnessNext = null;
        const record = witnessRecord(head);
        await new Promise<void>((resolve, reject) => write(fd, record, 0, record.length, 0, (e) => (e ? reject(e) : resolve())));
      }
    } catch (e) {
      this.witnessError = e as Error;
    } finally {
      this.witnessWriting = null;
    }
  }

  async lastSeq(): Promise<number> {
    const keys = await this.db.keys({ gte: 'e!', lt: 'e"', reverse: true, limit: 1 }).all();
    return keys.length ? Number(keys[0].slice(2)) : 0;
  }

  async streamVersion(stream: string): Promise<number> {
    const prefix = `i!${stream}!`;
    const keys = await this.db.keys({ gte: prefix, lt: prefix + '\uffff', reverse: true, limit: 1 }).all();
    return keys.length ? Number(keys[0].slice(prefix.length)) : 0;
  }

  async commit(batch: CommitBatch): Promise<void> {
    // A witness that cannot be written can no longer vouch for acknowledged events: stop acknowledging.
    if (this.witnessError) throw this.witnessError;
    // The chained form: several times cheaper per op than db.batch(array) in classic-level.
    const b = this.db.batch();
    for (const e of batch.events) {
      b.put(eventKey(e.seq), e.record);
      b.put(indexKey(e.stream, e.version), String(e.seq));
    }
    b.put(HEAD, JSON.stringify(batch.head));
    if (batch.checkpoint) b.put(CHECKPOINT, JSON.stringify(batch.checkpoint));
    await b.write({ sync: this.options.sync });
    this.writeWitness(batch.head);
  }

  async readRecords(fromSeq: number, limit: number): Promise<string[]> {
    const it = this.db.values({ gte: eventKey(Math.max(1, fromSeq)), lt: 'e"', limit });
    try {
      return await it.nextv(limit);
    } finally {
      await it.close();
    }
  }

  /** One iterator for the whole scan, with the next page read while the caller works on the current one. */
  async *scanRecords(fromSeq: number, limit: number, pageSize: number): AsyncIterable<string[]> {
    const it = this.db.values({ gte: eventKey(Math.max(1, fromSeq)), lt: 'e"', limit: Number.isFinite(limit) ? limit : -1 });
    let next = it.nextv(pageSize);
    try {
      for (;;) {
        const page = await next;
        if (page.length === 0) return;
        next = it.nextv(pageSize);
        yield page;
      }
    } finally {
      // A caller that stops early leaves one prefetch in flight: settle it before closing.
      await next.catch(() => undefined);
      await it.close();
    }
  }

  async readRecord(seq: number): Promise<string | undefined> {
    return this.db.get(eventKey(seq));
  }

  async readRecordsAt(seqs: readonly number[]): Promise<Array<string | undefined>> {
    return this.db.getMany(seqs.map(eventKey));
  }

  async streamSeqs(stream: string, fromVersion: number, limit: number) {
    const prefix = `i!${stream}!`;
    const entries = await this.db
      .iterator({ gte: indexKey(stream, Math.max(1, fromVersion)), lt: prefix + '\uffff', limit })
      .all();
    return entries.map(([k, v]) => ({ version: Number(k.slice(prefix.length)), seq: Number(v) }));
  }

  /**
   * Not synced: a snapshot only shortens replay, and is written after the events it covers are durable, so a
   * crash can lose the newest one (boot replays a longer tail) but never leave one ahead of the events.
   */
  async putSnapshot(stream: string, text: string): Promise<void> {
    await this.db.put('n!' + stream, text, { sync: false });
  }

  async getSnapshot(stream: string): Promise<string | undefined> {
    return this.db.get('n!' + stream);
  }
}
