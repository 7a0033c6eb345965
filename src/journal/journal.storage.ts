import { JournalHead } from './journal.port';

/** Length of a hash in a record (hex sha256). */
export const HASH_LEN = 64;

/**
 * A stored record is `<hash><prev_hash><body>`, or `<hash><body>` when it directly follows its predecessor in
 * storage (the prev hash is then the predecessor's hash; a hash is hex, a body starts with '{', so the two forms
 * cannot be confused). body = canonical JSON of the event without its hash; hash = sha256(prev_hash + body).
 */
export const fullRecord = (hash: string, prevHash: string, body: string): string => hash + prevHash + body;
export const chainedRecord = (hash: string, body: string): string => hash + body;
export const isChained = (record: string): boolean => record.charCodeAt(HASH_LEN) === 0x7b;
export const recordBody = (record: string): string => record.slice(isChained(record) ? HASH_LEN : 2 * HASH_LEN);

/** Where the chain was last known good: boot re-verifies only what comes after it. */
export interface Checkpoint {
  seq: number;
  hash: string;
}

export interface CommitBatch {
  events: Array<{ seq: number; stream: string; version: number; hash: string; prevHash: string; body: string }>;
  head: JournalHead;
  checkpoint?: Checkpoint;
}

/**
 * What an adapter must store. The chain, seq/version rules, group commit and subscriptions live in
 * EventJournal once; a storage only keeps bytes and applies a batch all-or-nothing.
 */
export interface JournalStorage {
  readonly location: string;
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
  commit(batch: CommitBatch): Promise<void>;
  /**
   * Stored records with seq >= fromSeq in seq order, at most limit, as pages from one cursor, in either form
   * (the reader walks the chain, so it knows each predecessor's hash). The event names its own seq, which the
   * journal checks, so a missing or misplaced record cannot go unnoticed.
   */
  scanRecords(fromSeq: number, limit: number, pageSize: number): AsyncIterable<string[]>;
  /** A record read on its own, in the full form (it carries its prev hash). */
  readRecord(seq: number): Promise<string | undefined>;
  /** Several records by seq in one read, in the full form; undefined where missing. */
  readRecordsAt(seqs: readonly number[]): Promise<Array<string | undefined>>;
  /** Index entries of a stream from a version, ascending. */
  streamSeqs(stream: string, fromVersion: number, limit: number): Promise<Array<{ version: number; seq: number }>>;
  putSnapshot(stream: string, text: string): Promise<void>;
  getSnapshot(stream: string): Promise<string | undefined>;
}
