import { Fence, JournalHead } from './journal.port';

/** Length of a hash in a record (hex sha256). */
export const HASH_LEN = 64;
/** Length of the check a checked record keeps of its own hash (its first hex characters). */
export const CHECK_LEN = 8;
/** In a segment, record 0, ANCHOR_EVERY, 2 * ANCHOR_EVERY, … keep their whole hash; the others a check of it. */
export const ANCHOR_EVERY = 8;

/**
 * A record is the canonical JSON of the event without its hash (the body), after its own hash, or a check of
 * it, and sometimes its prev hash. body = canonical JSON; hash = sha256(prev_hash + body). The forms:
 *   full     `<hash><prev_hash><body>`  the first record of a segment, and any record read on its own
 *   chained  `<hash><body>`             prev hash = the predecessor's hash
 *   checked  `<check><body>`            likewise, and its hash begins with check: the hash is recomputed by
 *                                        every reader anyway, so storing it whole for every event only added
 *                                        bytes to each synced write; the anchors keep the whole hash every few
 *                                        records, so a record read on its own needs only a few hashes
 *   `<check><prev_hash><body>`          a checked record read on its own (never stored)
 * Hashes are hex and a body starts with '{', so where the first '{' is tells the forms apart.
 */
export const fullRecord = (hash: string, prevHash: string, body: string): string => hash + prevHash + body;
export const chainedRecord = (hash: string, body: string): string => hash + body;
export const checkedRecord = (hash: string, body: string): string => hash.slice(0, CHECK_LEN) + body;

/** Where the record's body starts: CHECK_LEN, HASH_LEN, CHECK_LEN + HASH_LEN or 2 * HASH_LEN. */
export function bodyOffset(record: string): number {
  if (record.charCodeAt(CHECK_LEN) === 0x7b) return CHECK_LEN;
  if (record.charCodeAt(HASH_LEN) === 0x7b) return HASH_LEN;
  if (record.charCodeAt(CHECK_LEN + HASH_LEN) === 0x7b) return CHECK_LEN + HASH_LEN;
  return 2 * HASH_LEN;
}
/** Length of what a record keeps of its own hash, given its body offset: HASH_LEN, or CHECK_LEN for a check. */
export const ownHashLength = (offset: number): number => (offset === CHECK_LEN || offset === CHECK_LEN + HASH_LEN ? CHECK_LEN : HASH_LEN);
/** Whether the record carries its prev hash (read on its own), given its body offset. */
export const carriesPrevHash = (offset: number): boolean => offset === ownHashLength(offset) + HASH_LEN;
export const recordBody = (record: string): string => record.slice(bodyOffset(record));

/** Where the chain was last known good: boot re-verifies only what comes after it. */
export interface Checkpoint {
  seq: number;
  hash: string;
}

export interface CommitBatch {
  events: Array<{ seq: number; stream: string; version: number; hash: string; prevHash: string; body: string }>;
  head: JournalHead;
  checkpoint?: Checkpoint;
  /** The lease terms some of the batch's appends are fenced by (distinct); a single-node storage ignores them. */
  fences?: Fence[];
}

/** A shared storage's answer when another writer moved the head since the batch was chained: nothing was written. */
export interface HeadMoved {
  ok: false;
  reason: 'head_moved';
}
export const HEAD_MOVED: HeadMoved = { ok: false, reason: 'head_moved' };

/** A shared storage's answer when fences of the batch no longer hold: nothing was written. */
export interface Fenced {
  ok: false;
  reason: 'fenced';
  fenced: Fence[];
}

export const sameFence = (a: Fence, b: Fence): boolean => a.lease === b.lease && a.holder === b.holder && a.term === b.term;

/**
 * What an adapter must store. The chain, seq/version rules, group commit and subscriptions live in
 * EventJournal once; a storage only keeps bytes and applies a batch all-or-nothing.
 */
export interface JournalStorage {
  readonly location: string;
  /** Whether a commit waits for a synced write (fsync, a database's WAL flush): the journal then gathers appends for it. */
  readonly syncedCommits?: boolean;
  open(): Promise<void>;
  close(): Promise<void>;
  /**
   * `witness` is a head recorded outside the store after each durable commit, when the storage keeps one:
   * if the store comes back behind it, the store lost acknowledged events.
   */
  readMeta(): Promise<{ head: JournalHead | null; checkpoint: Checkpoint | null; witness?: JournalHead | null }>;
  /** Highest stored event seq, 0 when empty. */
  lastSeq(): Promise<number>;
  /** The stream's last version (its highest index entry), 0 when it has none. */
  streamVersion(stream: string): Promise<number>;
  /** streamVersion of each stream, in one read: an append that begins many streams looks them all up at once. */
  streamVersions(streams: readonly string[]): Promise<Map<string, number>>;
  /** All-or-nothing. Only a shared storage answers HEAD_MOVED or Fenced; a single-writer one resolves with nothing. */
  commit(batch: CommitBatch): Promise<void | HeadMoved | Fenced>;
  /**
   * Stored records with seq >= fromSeq in seq order, at most limit, as pages from one cursor, in either form
   * (the reader walks the chain, so it knows each predecessor's hash). The event names its own seq, which the
   * journal checks, so a missing or misplaced record cannot go unnoticed.
   */
  scanRecords(fromSeq: number, limit: number, pageSize: number): AsyncIterable<string[]>;
  /** A record read on its own, in a form that carries its prev hash. */
  readRecord(seq: number): Promise<string | undefined>;
  /**
   * Several records by seq in one read; undefined where missing. Each carries its prev hash, except that one
   * requested right after its predecessor (seq - 1, found) may come in its stored form: the reader knows
   * that hash, having just read the predecessor.
   */
  readRecordsAt(seqs: readonly number[]): Promise<Array<string | undefined>>;
  /** Index entries of a stream from a version, ascending. */
  streamSeqs(stream: string, fromVersion: number, limit: number): Promise<Array<{ version: number; seq: number }>>;
  putSnapshot(stream: string, text: string): Promise<void>;
  getSnapshot(stream: string): Promise<string | undefined>;
}

/**
 * A storage several journals (nodes) write to at once, such as a database. Its commit checks, under a lock, that
 * the stored head is the batch's prev hash and seq, and answers HEAD_MOVED otherwise; the journal then reads what
 * the others appended, publishes it and re-chains its pending group.
 */
export interface SharedJournalStorage extends JournalStorage {
  readonly shared: true;
  /** The recorded head and the highest stored seq, read together (one snapshot of the store). */
  readTip(): Promise<{ head: JournalHead | null; lastSeq: number }>;
}

export const isShared = (storage: JournalStorage): storage is SharedJournalStorage => (storage as Partial<SharedJournalStorage>).shared === true;
