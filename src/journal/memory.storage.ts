import { JournalHead } from './journal.port';
import { Checkpoint, CommitBatch, fullRecord, JournalStorage } from './journal.storage';

/** In-memory storage for unit tests; same contract as the LevelDB one. */
export class MemoryStorage implements JournalStorage {
  readonly location = 'memory';
  private records: string[] = [];
  private index = new Map<string, number[]>();
  private snapshots = new Map<string, string>();
  private head: JournalHead | null = null;
  private checkpoint: Checkpoint | null = null;

  async open(): Promise<void> {}
  async close(): Promise<void> {}

  async readMeta() {
    return { head: this.head, checkpoint: this.checkpoint };
  }

  async lastSeq(): Promise<number> {
    return this.records.length;
  }

  async streamVersion(stream: string): Promise<number> {
    return this.index.get(stream)?.length ?? 0;
  }

  async streamVersions(streams: readonly string[]): Promise<Map<string, number>> {
    return new Map(streams.map((s) => [s, this.index.get(s)?.length ?? 0]));
  }

  async commit(batch: CommitBatch): Promise<void> {
    for (const e of batch.events) {
      this.records[e.seq - 1] = fullRecord(e.hash, e.prevHash, e.body);
      const seqs = this.index.get(e.stream) ?? [];
      seqs[e.version - 1] = e.seq;
      this.index.set(e.stream, seqs);
    }
    this.head = batch.head;
    if (batch.checkpoint) this.checkpoint = batch.checkpoint;
  }

  private readRecords(fromSeq: number, limit: number): string[] {
    const from = Math.max(1, fromSeq) - 1;
    return this.records.slice(from, from + limit).filter((r) => r !== undefined);
  }

  async *scanRecords(fromSeq: number, limit: number, pageSize: number): AsyncIterable<string[]> {
    for (let seq = Math.max(1, fromSeq), left = limit; left > 0; ) {
      const page = this.readRecords(seq, Math.min(pageSize, left));
      if (page.length === 0) return;
      yield page;
      seq += page.length;
      left -= page.length;
    }
  }

  async readRecord(seq: number): Promise<string | undefined> {
    return this.records[seq - 1];
  }

  async readRecordsAt(seqs: readonly number[]): Promise<Array<string | undefined>> {
    return seqs.map((seq) => this.records[seq - 1]);
  }

  async streamSeqs(stream: string, fromVersion: number, limit: number) {
    const seqs = this.index.get(stream) ?? [];
    const from = Math.max(1, fromVersion);
    return seqs.slice(from - 1, from - 1 + limit).map((seq, i) => ({ version: from + i, seq }));
  }

  async putSnapshot(stream: string, text: string): Promise<void> {
    this.snapshots.set(stream, text);
  }

  async getSnapshot(stream: string): Promise<string | undefined> {
    return this.snapshots.get(stream);
  }
}
