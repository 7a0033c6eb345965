import { JournalHead } from './journal.port';

/** Where the chain was last known good: boot re-verifies only what comes after it. */
export interface Checkpoint {
  seq: number;
  hash: string;
}

export interface CommitBatch {
  events: Array<{ seq: number; stream: string; version: number; record: string }>;
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
   * Stored records with seq >= fromSeq in seq order, at most limit, as pages from one cursor. A record is
   * `<hash><prev_hash><canonical JSON of the event without its hash>`; the event names its own seq,
   * which the journal checks, so a missing or misplaced record cannot go unnoticed.
   */
  scanRecords(fromSeq: number, limit: number, pageSize: number): AsyncIterable<string[]>;
  readRecord(seq: number): Promise<string | undefined>;
  /** Several records by seq in one read; undefined where missing. */
  readRecordsAt(seqs: readonly number[]): Promise<Array<string | undefined>>;
  /** Index entries of a stream from a version, ascending. */
  streamSeqs(stream: string, fromVersion: number, limit: number): Promise<Array<{ version: number; seq: number }>>;
  putSnapshot(stream: string, text: string): Promise<void>;
  getSnapshot(stream: string): Promise<string | undefined>;
}
