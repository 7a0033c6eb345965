import { AsyncResource } from 'node:async_hooks';
import { Observable, Subject } from 'rxjs';
import { canonicalJson, canonicalValue, chainHash, GENESIS_HASH, sha256 } from './canonical-json';
import {
  AppendAllOptions,
  AppendOptions,
  AppendResult,
  EventMeta,
  ExpectedVersion,
  Fence,
  Journal,
  JournalConflictError,
  JournalCorruptError,
  JournalError,
  JournalEvent,
  JournalFencedError,
  JournalHead,
  JsonValue,
  NewEvent,
  Snapshot,
  StreamAppend,
  VerifyReport,
} from './journal.port';
import {
  bodyOffset,
  carriesPrevHash,
  Checkpoint,
  CommitBatch,
  Fenced,
  HASH_LEN,
  HeadMoved,
  isShared,
  JournalStorage,
  ownHashLength,
  sameFence,
  SharedJournalStorage,
} from './journal.storage';

export interface JournalOptions {
  /** Epoch milliseconds; injected so tests control time. */
  now?: () => number;
  /** A checkpoint is written every this many events; boot re-verifies only what follows the last one. */
  checkpointEvery?: number;
  /**
   * 'tail' (default) refuses to open a journal whose events after the last checkpoint do not verify;
   * 'none' opens at the recorded head without checking, for offline tools that then call verify().
   */
  verifyOnOpen?: 'tail' | 'none';
  /** The correlation id of the work in progress (the request being handled), for events appended without one. */
  correlationId?: () => string | null;
  /** Hears a follower's apply step that threw (the event is published all the same). */
  onFollowerError?: (e: Error, event: JournalEvent) => void;
}

/**
 * Lets the event loop finish reading what has arrived before a group is taken: the appends of every request read in
 * the same pass then share one synced write. Taken at once, the first append of a pass was written alone, and the rest
 * waited for the next write (bench:sessions, 50 clients: groups of 16 signals, 24 after this).
 */
const gatherAppends = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/**
 * Appends already queued that make a group large enough to be taken without gathering: a pass more of the event loop
 * would only delay them. Closed-loop appenders, all answered at once, are all back before the group is taken (64 of
 * them: the check phase's hop cost 0.01 ms a group on average and 0.5 ms at p99).
 */
const GATHERED_ENOUGH = 64;

const STREAM_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;
const EVENT_TYPE = /^[a-z][a-z0-9_.-]{0,99}$/;
const PAGE = 4096;
/**
 * Stream versions kept in memory, the streams appended to most recently: one per stream ever appended to would grow
 * with history (every session has its own). A stream not among them is looked up in storage before its append.
 */
export const VERSION_CACHE_STREAMS = 8192;

interface PreparedEvent {
  type: string;
  /** JSON of the type, and canonical JSON of data and meta, ready to be spliced into the stored body. */
  typeJson: string;
  data: string;
  /** The data as replay will parse it back from `data`: what appenders and subscribers are handed. */
  value: JsonValue;
  meta: string;
  metaValue: EventMeta;
}

/** One stream's part of an append. */
interface PendingPart {
  stream: string;
  expected: ExpectedVersion;
  events: PreparedEvent[];
}

/**
 * One append: its parts are written all together or not at all. An append() is answered its one part's result, an
 * appendAll() every part's: told apart here rather than by a closure around each append's resolve and apply.
 */
type Pending = { parts: PendingPart[]; fence?: Fence; reject: (e: Error) => void } & (
  | { single: true; apply?: (result: AppendResult) => void; resolve: (r: AppendResult) => void }
  | { single: false; apply?: (results: AppendResult[]) => void; resolve: (r: AppendResult[]) => void }
);

/** A record as chained, with what its appender and subscribers will be given. */
type ChainedRecord = CommitBatch['events'][number] & { at: string; event: PreparedEvent };

/** Appends chained after a tip (the head, or the group being written): their records, then their write. */
interface Chained {
  /** The appends whose records it holds, in order. */
  accepted: Pending[];
  /** Appends refused for their expected versions; `after` counts the accepted ones that came before each. */
  conflicts: Array<{ p: Pending; error: JournalConflictError; after: number }>;
  records: ChainedRecord[];
  /** The seq it is chained after, and its own last seq and hash. */
  baseSeq: number;
  seq: number;
  hash: string;
  /** Each stream it appends to, at its version after it. */
  versions: Map<string, number>;
  /** The group being written that it is chained after, until it is written itself. */
  under: Chained | null;
  written: Promise<void | HeadMoved | Fenced> | null;
  /** What each accepted append will be answered, built while it is written. */
  results: AppendResult[][];
}

/** A chained group's appends in the order they came, accepted and refused. */
function inOrder(chained: Chained): Pending[] {
  if (chained.conflicts.length === 0) return chained.accepted.slice();
  const out: Pending[] = [];
  let c = 0;
  for (let i = 0; i <= chained.accepted.length; i++) {
    while (c < chained.conflicts.length && chained.conflicts[c].after === i) out.push(chained.conflicts[c++].p);
    if (i < chained.accepted.length) out.push(chained.accepted[i]);
  }
  return out;
}

/** The meta of an event appended without one, outside any request: the same for every such event. */
const DEFAULT_META: EventMeta = { actor: 'system', causation_seq: null, correlation_id: null };
const DEFAULT_META_JSON = '{"actor":"system","causation_seq":null,"correlation_id":null}';

function normaliseMeta(meta: Partial<EventMeta> | undefined, correlationId: string | null): EventMeta {
  const m: EventMeta = {
    actor: meta?.actor ?? 'system',
    causation_seq: meta?.causation_seq ?? null,
    correlation_id: meta?.correlation_id ?? correlationId,
  };
  if (typeof m.actor !== 'string') throw new TypeError('meta.actor must be a string');
  if (m.causation_seq !== null && !(Number.isInteger(m.causation_seq) && m.causation_seq > 0)) {
    throw new TypeError('meta.causation_seq must be a positive integer or null');
  }
  if (m.correlation_id !== null && typeof m.correlation_id !== 'string') throw new TypeError('meta.correlation_id must be a string or null');
  return m;
}

/**
 * Opens a stored record: parses the event, checks it is the expected seq and that its hash covers its
 * predecessor's hash and its own body (against the whole stored hash, or the check a checked record keeps).
 * Given the predecessor's actual hash (sequential reads), it also checks the link, and a record that omits
 * its prev hash is hashed over it; a record read in isolation carries its prev hash and is checked against
 * it, and the links themselves are checked by every sequential walk (open, verify, replay). Parsing first
 * lets a missing event be reported as missing rather than as a bad hash.
 */
function openRecord(seq: number, record: string, actualPrevHash?: string): JournalEvent {
  const at = bodyOffset(record);
  const own = ownHashLength(at);
  const carried = carriesPrevHash(at);
  if (!carried && actualPrevHash === undefined) throw new JournalCorruptError(seq, 'record read on its own does not name its prev hash');
  const prevHash = carried ? record.slice(own, at) : (actualPrevHash as string);
  const body = record.slice(at);
  let event: JournalEvent | null;
  try {
    event = JSON.parse(body);
  } catch {
    throw new JournalCorruptError(seq, 'event is not valid JSON');
  }
  if (typeof event !== 'object' || event === null || typeof event.seq !== 'number') {
    throw new JournalCorruptError(seq, 'stored value is not an event');
  }
  if (event.seq !== seq) {
    throw new JournalCorruptError(seq, event.seq > seq ? 'event missing (seq gap)' : `found seq ${event.seq} where seq ${seq} belongs`);
  }
  const hash = chainHash(prevHash, body);
  if (own === HASH_LEN ? hash !== record.slice(0, HASH_LEN) : !hash.startsWith(record.slice(0, own))) {
    throw new JournalCorruptError(seq, 'hash does not match the event (event altered)');
  }
  if (actualPrevHash !== undefined && prevHash !== actualPrevHash) {
    throw new JournalCorruptError(seq, 'hash chain broken (does not follow the previous event)');
  }
  event.hash = hash;
  return event;
}

/**
 * The journal: hash-chained, gapless, group-committed, over any JournalStorage.
 * One writer loop drains the append queue into one storage batch, so concurrent appenders share one fsync.
 */
export class EventJournal implements Journal {
  private readonly committed = new Subject<JournalEvent>();
  readonly committed$ = this.committed.asObservable();
  private readonly followers = new Set<(event: JournalEvent) => void>();
  private readonly onFollowerError: (e: Error, event: JournalEvent) => void;
  private headSeq = 0;
  private headHash = GENESIS_HASH;
  private readonly versions = new Map<string, number>();
  private queue: Pending[] = [];
  /** Callers of catchUp() waiting for the writer loop to read what other writers appended. */
  private catchUpWaiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  /** The storage when other journals write to it too; null for a single writer. */
  private readonly shared: SharedJournalStorage | null;
  private writing: Promise<void> | null = null;
  /** The group being written, and the one chained after it while it is (written once it is durable). */
  private inFlight: Chained | null = null;
  private prepared: Chained | null = null;
  private prepareScheduled = false;
  private closed = false;
  private opened: JournalHead = { seq: 0, hash: GENESIS_HASH };
  /** Head recorded outside the store at the last durable commit before this open, if the storage keeps one. */
  private witness: JournalHead | null = null;
  private readonly now: () => number;
  private readonly checkpointEvery: number;
  private readonly correlationId: () => string | null;
  /**
   * Bound to the context the journal was opened in: a batch holds the events of several requests, so the subscribers
   * it publishes to must not run in (and append under the correlation id of) whichever request started it.
   */
  private readonly startDrain = AsyncResource.bind(() => this.drain());

  private constructor(
    private readonly storage: JournalStorage,
    options: JournalOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.checkpointEvery = options.checkpointEvery ?? 4096;
    this.correlationId = options.correlationId ?? (() => null);
    this.shared = isShared(storage) ? storage : null;
    this.onFollowerError = options.onFollowerError ?? (() => undefined);
  }

  /** Opens the storage and verifies everything after the last checkpoint; refuses a broken chain. */
  static async open(storage: JournalStorage, options: JournalOptions = {}): Promise<EventJournal> {
    await storage.open();
    const journal = new EventJournal(storage, options);
    try {
      if (options.verifyOnOpen === 'none') await journal.loadHead();
      else await journal.verifyTail();
      journal.opened = journal.head();
    } catch (e) {
      await storage.close();
      throw e;
    }
    return journal;
  }

  get location(): string {
    return this.storage.location;
  }

  head(): JournalHead {
    return { seq: this.headSeq, hash: this.headHash };
  }

  openedHead(): JournalHead {
    return this.opened;
  }

  private async loadHead(): Promise<void> {
    const { head, witness } = await this.storage.readMeta();
    this.witness = witness ?? null;
    if (head) {
      this.headSeq = head.seq;
      this.headHash = head.hash;
    }
  }

  private async verifyTail(): Promise<void> {
    const { head: recorded, checkpoint, witness } = await this.storage.readMeta();
    this.witness = witness ?? null;
    if (!recorded && (await this.storage.lastSeq()) > 0) throw new JournalCorruptError(1, 'events exist but the head record is missing');
    const head = recorded ?? { seq: 0, hash: GENESIS_HASH };
    let from = 1;
    let prev = GENESIS_HASH;
    if (checkpoint) {
      const rec = await this.storage.readRecord(checkpoint.seq);
      if (rec === undefined) throw new JournalCorruptError(checkpoint.seq, 'checkpointed event is missing');
      if (openRecord(checkpoint.seq, rec).hash !== checkpoint.hash) {
        throw new JournalCorruptError(checkpoint.seq, 'checkpoint hash does not match the event');
      }
      from = checkpoint.seq + 1;
      prev = checkpoint.hash;
    }
    // A shared store grows while it is read: the recorded head, read with the checkpoint, bounds the walk.
    const until = this.shared ? head.seq : Number.MAX_SAFE_INTEGER;
    const problem = (await this.endProblem(await this.walk(from, prev, () => undefined, until), head)) ?? (await this.tipProblem());
    if (problem) throw problem;
    this.headSeq = head.seq;
    this.headHash = head.hash;
  }

  /** What is wrong with where the stored chain ends, against the recorded head and the witness; null if nothing. */
  private async endProblem(end: JournalHead, head: JournalHead): Promise<JournalCorruptError | null> {
    const w = this.witness;
    if (w && w.seq > end.seq) {
      return new JournalCorruptError(
        end.seq + 1,
        `events up to seq ${w.seq} were acknowledged but the store ends at ${end.seq} (the storage dropped part of its log)`,
      );
    }
    if (end.seq < head.seq) return new JournalCorruptError(end.seq + 1, `event missing (head is at seq ${head.seq})`);
    if (end.seq > head.seq) return new JournalCorruptError(head.seq + 1, `event beyond the recorded head ${head.seq}`);
    if (end.hash !== head.hash) return new JournalCorruptError(head.seq, 'head hash does not match the last event');
    if (w && w.seq > 0 && (w.seq === end.seq ? end.hash : await this.hashAt(w.seq)) !== w.hash) {
      return new JournalCorruptError(w.seq, 'event differs from the one acknowledged');
    }
    return null;
  }

  /** Shared storage: a stored event past the recorded head, both read in one snapshot (others append meanwhile). */
  private async tipProblem(): Promise<JournalCorruptError | null> {
    if (!this.shared) return null;
    const { head, lastSeq } = await this.shared.readTip();
    const at = head?.seq ?? 0;
    return lastSeq > at ? new JournalCorruptError(at + 1, `event beyond the recorded head ${at}`) : null;
  }

  /**
   * A stored event after the head no one vouches for. A group is in storage a moment before the head moves to
   * it, so while anything is being written, or the head moved, what lies past the head proves nothing.
   */
  private async storedBeyond(head: JournalHead): Promise<JournalCorruptError | null> {
    const quiet = () => this.writing === null && this.headSeq === head.seq;
    if (!quiet()) return null;
    const last = await this.storage.lastSeq();
    return quiet() && last > head.seq ? new JournalCorruptError(head.seq + 1, `event beyond the recorded head ${head.seq}`) : null;
  }

  /**
   * Reads and verifies events from `from` until the end of storage (or `until`), calling `each`.
   * Returns the last verified seq and hash.
   */
  private async walk(
    from: number,
    prevHash: string,
    each: (event: JournalEvent) => void,
    until = Number.MAX_SAFE_INTEGER,
  ): Promise<{ seq: number; hash: string }> {
    let expected = from;
    let prev = prevHash;
    for await (const page of this.storage.scanRecords(from, until - from + 1, PAGE)) {
      for (const record of page) {
        const event = openRecord(expected, record, prev);
        each(event);
        prev = event.hash;
        expected++;
      }
    }
    return { seq: expected - 1, hash: prev };
  }

  /**
   * Verifies the whole stored history: hash chain, gapless seq, per-stream version contiguity, and that the
   * last stored event is the recorded head. Reports corruption instead of throwing it.
   */
  async verify(): Promise<VerifyReport> {
    const versions = new Map<string, number>();
    let checked = 0;
    let head = this.head();
    const report = (e: JournalCorruptError): VerifyReport => ({
      ok: false,
      head_seq: head.seq,
      head_hash: head.hash,
      checked,
      first_bad_seq: e.seq,
      error: e.message,
    });
    try {
      if (this.shared) {
        await this.catchUp();
        head = this.head();
      }
      // Up to the head as it was when verification began: appends go on meanwhile.
      const end = await this.walk(
        1,
        GENESIS_HASH,
        (e) => {
          const v = versions.get(e.stream) ?? 0;
          if (e.version !== v + 1) throw new JournalCorruptError(e.seq, `stream ${e.stream} version ${e.version} follows ${v}`);
          versions.set(e.stream, e.version);
          checked++;
        },
        head.seq,
      );
      const problem = (this.shared ? await this.tipProblem() : await this.storedBeyond(head)) ?? (await this.endProblem(end, head));
      return problem ? report(problem) : { ok: true, head_seq: head.seq, head_hash: head.hash, checked };
    } catch (e) {
      if (e instanceof JournalCorruptError) return report(e);
      throw e;
    }
  }

  async streamVersion(stream: string): Promise<number> {
    const cached = this.versions.get(stream);
    if (cached !== undefined) return cached;
    const v = await this.storage.streamVersion(stream);
    this.versions.set(stream, v);
    return v;
  }

  append(stream: string, events: readonly NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new JournalError('journal_closed', 'the journal is closed'));
    let parts: PendingPart[];
    try {
      const expected = options.expectedVersion ?? 'any';
      parts = [{ stream, expected, events: this.prepare(stream, events, expected) }];
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<AppendResult>((resolve, reject) => this.enqueue({ parts, single: true, apply: options.apply, fence: options.fence, resolve, reject }));
  }

  appendAll(writes: readonly StreamAppend[], options: AppendAllOptions = {}): Promise<AppendResult[]> {
    if (this.closed) return Promise.reject(new JournalError('journal_closed', 'the journal is closed'));
    let parts: PendingPart[];
    try {
      if (!Array.isArray(writes) || writes.length === 0) throw new JournalError('journal_invalid_event', 'append needs at least one stream');
      const streams = new Set(writes.map((w) => w.stream));
      if (streams.size !== writes.length) throw new JournalError('journal_invalid_event', 'an append names each stream once');
      parts = writes.map((w) => {
        const expected = w.expectedVersion ?? 'any';
        return { stream: w.stream, expected, events: this.prepare(w.stream, w.events, expected) };
      });
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<AppendResult[]>((resolve, reject) => this.enqueue({ parts, single: false, apply: options.apply, fence: options.fence, resolve, reject }));
  }

  private enqueue(pending: Pending): void {
    this.queue.push(pending);
    if (!this.writing) {
      // Start on the next microtask, so appends issued in the same tick share the first batch too.
      this.writing = Promise.resolve().then(this.startDrain);
    } else if (this.inFlight && !this.prepareScheduled) {
      this.prepareScheduled = true;
      setImmediate(this.prepareNext);
    }
  }

  /** Validates and canonicalises up front, so nothing malformed reaches the writer or the disk. */
  private prepare(stream: string, events: readonly NewEvent[], expected: ExpectedVersion): PreparedEvent[] {
    const invalid = (msg: string) => new JournalError('journal_invalid_event', msg);
    if (!STREAM_NAME.test(stream)) throw invalid(`invalid stream name ${JSON.stringify(stream)}`);
    if (!(expected === 'any' || expected === 'no_stream' || (Number.isInteger(expected) && expected >= 0))) {
      throw invalid(`invalid expected version ${JSON.stringify(expected)}`);
    }
    if (!Array.isArray(events) || events.length === 0) throw invalid('append needs at least one event');
    return events.map((e, i) => {
      if (!e || typeof e.type !== 'string' || !EVENT_TYPE.test(e.type)) throw invalid(`event ${i}: invalid type ${JSON.stringify(e?.type)}`);
      try {
        const correlationId = this.correlationId();
        const metaValue = e.meta === undefined && correlationId === null ? DEFAULT_META : normaliseMeta(e.meta, correlationId);
        // Keys in sorted order: this is the canonical JSON of meta.
        const meta =
          metaValue === DEFAULT_META
            ? DEFAULT_META_JSON
            : `{"actor":${JSON.stringify(metaValue.actor)},"causation_seq":${metaValue.causation_seq},"correlation_id":${JSON.stringify(metaValue.correlation_id)}}`;
        // The type matched EVENT_TYPE, so it needs no escaping.
        // The JSON value first, then its text: the value is a plain tree already sorted, which canonicalJson
        // writes by its fast paths, and toJSON is called once.
        const value = canonicalValue(e.data ?? null);
        return { type: e.type, typeJson: `"${e.type}"`, data: canonicalJson(value), value, meta, metaValue };
      } catch (err) {
        throw invalid(`event ${i} (${e.type}): ${(err as Error).message}`);
      }
    });
  }

  follow(apply: (event: JournalEvent) => void): () => void {
    const own = (e: JournalEvent) => apply(e);
    this.followers.add(own);
    return () => this.followers.delete(own);
  }

  /**
   * Shared storage: reads what other writers appended after this journal's head, in seq order, verifying the chain,
   * and publishes it on committed$ as its own commits are. Runs in the writer loop, between groups. A no-op on a
   * single-writer storage, and on a closed journal (a notice can arrive while it closes: it has no one to tell).
   */
  catchUp(): Promise<void> {
    if (!this.shared || this.closed) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.catchUpWaiters.push({ resolve, reject });
      if (!this.writing) this.writing = Promise.resolve().then(this.startDrain);
    });
  }

  /** Reads, verifies and publishes the events other writers appended up to the shared store's head; how many. */
  private async pull(): Promise<number> {
    const { head, lastSeq } = await (this.shared as SharedJournalStorage).readTip();
    const target = head ?? { seq: 0, hash: GENESIS_HASH };
    if (lastSeq > target.seq) throw new JournalCorruptError(target.seq + 1, `event beyond the recorded head ${target.seq}`);
    if (target.seq < this.headSeq) {
      throw new JournalCorruptError(target.seq + 1, `events up to seq ${this.headSeq} were committed but the stored head is at ${target.seq}`);
    }
    let pulled = 0;
    while (this.headSeq < target.seq) {
      const events: JournalEvent[] = [];
      const end = await this.walk(this.headSeq + 1, this.headHash, (e) => events.push(e), Math.min(target.seq, this.headSeq + PAGE));
      if (events.length === 0) throw new JournalCorruptError(this.headSeq + 1, `event missing (head is at seq ${target.seq})`);
      this.headSeq = end.seq;
      this.headHash = end.hash;
      for (const e of events) this.versions.delete(e.stream);
      for (const e of events) this.versions.set(e.stream, e.version);
      this.trimVersions();
      for (const e of events) {
        for (const apply of this.followers) {
          try {
            apply(e);
          } catch (err) {
            this.onFollowerError(err as Error, e);
          }
        }
        this.committed.next(e);
      }
      pulled += events.length;
    }
    if (this.headHash !== target.hash) throw new JournalCorruptError(target.seq, 'head hash does not match the last event');
    return pulled;
  }

  private trimVersions(): void {
    for (const s of this.versions.keys()) {
      if (this.versions.size <= VERSION_CACHE_STREAMS) break;
      this.versions.delete(s);
    }
  }

  private async drain(): Promise<void> {
    try {
      let inFlight: Chained | null = null;
      for (;;) {
        if (inFlight) {
          inFlight = await this.settle(inFlight);
          continue;
        }
        if (this.catchUpWaiters.length > 0) {
          const waiters = this.catchUpWaiters;
          this.catchUpWaiters = [];
          try {
            await this.pull();
            for (const w of waiters) w.resolve();
          } catch (e) {
            for (const w of waiters) w.reject(e as Error);
          }
        }
        if (this.queue.length === 0) {
          // Callers of catchUp() who came while it read are answered before the loop ends.
          if (this.catchUpWaiters.length > 0) continue;
          break;
        }
        // A commit without a synced write (memory) costs nothing to gather for.
        if (this.storage.syncedCommits && this.queue.length < GATHERED_ENOUGH) await gatherAppends();
        const group = this.queue;
        this.queue = [];
        if (!(await this.lookUpVersions(group))) continue;
        const chained = this.chainAfter(null);
        const taken = this.chain(group, chained);
        // Every stream was just looked up; should one have been let go meanwhile, the rest waits for the next group.
        if (taken < group.length) this.queue = group.slice(taken).concat(this.queue);
        inFlight = await this.submit(chained);
      }
    } finally {
      this.writing = null;
    }
  }

  /** Reads the versions of the group's streams not cached; false (the group rejected) if that fails. */
  private async lookUpVersions(group: Pending[]): Promise<boolean> {
    let unknown: Set<string> | null = null;
    for (const p of group) for (const part of p.parts) if (!this.versions.has(part.stream)) (unknown ??= new Set()).add(part.stream);
    if (!unknown) return true;
    try {
      const [only] = unknown;
      // Many streams (an append that begins them, say) are looked up in one read.
      if (unknown.size === 1) await this.streamVersion(only);
      else for (const [s, v] of await this.storage.streamVersions([...unknown])) this.versions.set(s, v);
      return true;
    } catch (e) {
      for (const p of group) p.reject(e as Error);
      return false;
    }
  }

  /** An empty group chained after the committed head, or after the group being written. */
  private chainAfter(under: Chained | null): Chained {
    return {
      accepted: [],
      conflicts: [],
      records: [],
      baseSeq: under ? under.seq : this.headSeq,
      seq: under ? under.seq : this.headSeq,
      hash: under ? under.hash : this.headHash,
      versions: new Map(),
      under,
      written: null,
      results: [],
    };
  }

  /**
   * While a group is being written, chains the appends that arrived meanwhile after it (hashing and encoding them),
   * so the next group is ready to be written the moment this one is durable. Gathered for one pass of the event loop,
   * as a group is; nothing is written until the group under it is durable.
   */
  private readonly prepareNext = (): void => {
    this.prepareScheduled = false;
    const under = this.inFlight;
    if (!under || this.queue.length === 0 || this.catchUpWaiters.length > 0) return;
    const next = this.prepared ?? this.chainAfter(under);
    const taken = this.chain(this.queue, next);
    if (taken === 0) return;
    this.queue = taken === this.queue.length ? [] : this.queue.slice(taken);
    this.prepared = next;
  };

  /**
   * Chains appends after `into`'s last event, in order, checking each one's expected versions against the streams as
   * they will be once everything before it is written. Stops at the first append naming a stream whose version is not
   * known without a read (only a group chained afresh has looked its streams up); answers how many it took.
   */
  private chain(group: readonly Pending[], into: Chained): number {
    const atJson = JSON.stringify(new Date(this.now()).toISOString());
    const at: string = JSON.parse(atJson);
    let seq = into.seq;
    let hash = into.hash;
    let taken = 0;
    // Each part's version before the append, found while checking it.
    const currents: number[] = [];
    for (; taken < group.length; taken++) {
      const p = group[taken];
      // Every part's expected version is checked before any is written: one conflict refuses the whole append.
      let conflict: JournalConflictError | null = null;
      let unknown = false;
      for (let i = 0; i < p.parts.length; i++) {
        const part = p.parts[i];
        const current = this.versionIn(into, part.stream);
        if (current === undefined) {
          unknown = true;
          break;
        }
        currents[i] = current;
        const ok = part.expected === 'any' || (part.expected === 'no_stream' ? current === 0 : part.expected === current);
        if (!ok) conflict ??= new JournalConflictError(part.stream, part.expected, current);
      }
      if (unknown) break;
      if (conflict) {
        into.conflicts.push({ p, error: conflict, after: into.accepted.length });
        continue;
      }
      for (let i = 0; i < p.parts.length; i++) {
        const part = p.parts[i];
        let version = currents[i];
        // The stream matched STREAM_NAME, so it needs no escaping.
        const streamJson = `"${part.stream}"`;
        for (const e of part.events) {
          seq++;
          version++;
          // Keys in sorted order, so the body is canonical JSON without re-sorting the pre-canonicalised parts.
          const body = `{"at":${atJson},"data":${e.data},"meta":${e.meta},"seq":${seq},"stream":${streamJson},"type":${e.typeJson},"version":${version}}`;
          const prevHash = hash;
          hash = chainHash(prevHash, body);
          into.records.push({ seq, stream: part.stream, version, hash, prevHash, body, at, event: e });
        }
        into.versions.set(part.stream, version);
      }
      into.accepted.push(p);
    }
    into.seq = seq;
    into.hash = hash;
    return taken;
  }

  /** A stream's version once everything chained before `into`'s end is written; undefined if not known without a read. */
  private versionIn(into: Chained, stream: string): number | undefined {
    return into.versions.get(stream) ?? into.under?.versions.get(stream) ?? this.versions.get(stream);
  }

  /**
   * Writes a chained group (its conflicts answered first when nothing else can change them), and builds while the
   * write is under way what its appenders and subscribers will get. Answers the group in flight, or null when it had
   * nothing to write.
   */
  private async submit(chained: Chained): Promise<Chained | null> {
    chained.under = null;
    if (chained.accepted.length === 0) {
      // On a shared storage a conflict found against this journal's head holds only if the store's head is still it.
      if (this.shared && chained.conflicts.length > 0) {
        let head: JournalHead | null;
        try {
          ({ head } = await this.shared.readTip());
        } catch (e) {
          for (const { p } of chained.conflicts) p.reject(e as Error);
          return null;
        }
        if ((head?.seq ?? 0) !== this.headSeq || (head?.hash ?? GENESIS_HASH) !== this.headHash) {
          await this.retryAfterPull(chained.conflicts.map((c) => c.p));
          return null;
        }
      }
      for (const { p, error } of chained.conflicts) p.reject(error);
      return null;
    }
    if (!this.shared) {
      for (const { p, error } of chained.conflicts) p.reject(error);
      chained.conflicts = [];
    }
    const { records, seq, hash } = chained;
    const checkpoint: Checkpoint | undefined =
      Math.floor(seq / this.checkpointEvery) > Math.floor(chained.baseSeq / this.checkpointEvery) ? { seq, hash } : undefined;
    const fences: Fence[] = [];
    for (const p of chained.accepted) if (p.fence && !fences.some((f) => sameFence(f, p.fence as Fence))) fences.push(p.fence);
    chained.written = this.storage.commit({ events: records, head: { seq, hash }, checkpoint, ...(fences.length ? { fences } : {}) });
    this.inFlight = chained;
    // While the write is under way: what the appenders and subscribers will get. data is the canonical copy made
    // in prepare(), so they see exactly what replay will see, not the caller's live object.
    let r = 0;
    for (const p of chained.accepted) {
      const out: AppendResult[] = [];
      for (const part of p.parts) {
        const events: JournalEvent[] = [];
        for (let i = 0; i < part.events.length; i++) {
          const { seq: s, version: v, hash: h, at, event: e } = records[r++];
          const m = e.metaValue;
          events.push({
            seq: s,
            stream: part.stream,
            version: v,
            type: e.type,
            at,
            data: e.value,
            meta: { actor: m.actor, causation_seq: m.causation_seq, correlation_id: m.correlation_id },
            hash: h,
          });
        }
        out.push({ version: events[events.length - 1].version, events });
      }
      chained.results.push(out);
    }
    return chained;
  }

  /**
   * Waits for the group in flight to be durable, then writes the group chained after it at once, and only then
   * answers the group's appenders and publishes its events. If the write failed or was refused, the group chained
   * after it is chained again: its appends go back to the front of the queue, in order.
   */
  private async settle(inFlight: Chained): Promise<Chained | null> {
    let refused: void | HeadMoved | Fenced | null;
    try {
      refused = await inFlight.written;
    } catch (e) {
      this.inFlight = null;
      this.requeuePrepared();
      for (const p of inFlight.accepted) p.reject(e as Error);
      for (const { p } of inFlight.conflicts) p.reject(e as Error);
      return null;
    }
    this.inFlight = null;
    if (refused?.reason === 'head_moved' || refused?.reason === 'fenced') {
      this.requeuePrepared();
      let retry = inOrder(inFlight);
      if (refused.reason === 'fenced') {
        // The fenced appenders are refused and nothing was written: the rest of the group is chained again.
        const isFenced = (p: Pending) => !!p.fence && refused.fenced.some((f) => sameFence(f, p.fence as Fence));
        for (const p of retry) if (isFenced(p)) p.reject(new JournalFencedError(p.fence as Fence));
        retry = retry.filter((p) => !isFenced(p));
        this.queue = retry.concat(this.queue);
      } else {
        // Another writer moved the head: read and publish what it appended, then chain the group again after it.
        await this.retryAfterPull(retry);
      }
      return null;
    }
    for (const { p, error } of inFlight.conflicts) p.reject(error);
    this.headSeq = inFlight.seq;
    this.headHash = inFlight.hash;
    for (const [s, v] of inFlight.versions) {
      // Re-inserted, so the map's order is the order streams were last appended to.
      this.versions.delete(s);
      this.versions.set(s, v);
    }
    // Only here, between groups: a group's streams stay cached from its lookup to its write.
    this.trimVersions();
    let next: Chained | null = null;
    const prepared = this.prepared;
    this.prepared = null;
    if (prepared && this.catchUpWaiters.length === 0) {
      // Appends that came after the last preparation join it, if their streams are known.
      if (this.queue.length > 0) {
        const taken = this.chain(this.queue, prepared);
        this.queue = taken === this.queue.length ? [] : this.queue.slice(taken);
      }
      next = await this.submit(prepared);
    } else if (prepared) {
      this.queue = inOrder(prepared).concat(this.queue);
    }
    // Every appender of the group applies before anyone is told: a subscriber sees state at least as new as its event.
    const { accepted, results } = inFlight;
    for (let i = 0; i < accepted.length; i++) {
      const p = accepted[i];
      try {
        if (p.single) {
          p.apply?.(results[i][0]);
          p.resolve(results[i][0]);
        } else {
          p.apply?.(results[i]);
          p.resolve(results[i]);
        }
      } catch (e) {
        p.reject(e as Error);
      }
    }
    for (const out of results) for (const part of out) for (const e of part.events) this.committed.next(e);
    return next;
  }

  /** The group chained after the one in flight goes back to the front of the queue, to be chained again. */
  private requeuePrepared(): void {
    if (!this.prepared) return;
    this.queue = inOrder(this.prepared).concat(this.queue);
    this.prepared = null;
  }

  /** Reads what other writers appended, then queues `appends` first to be chained after it; rejects them if that fails. */
  private async retryAfterPull(appends: Pending[]): Promise<void> {
    try {
      if ((await this.pull()) === 0) throw new JournalCorruptError(this.headSeq + 1, 'the stored head moved but no event follows this journal\'s head');
    } catch (e) {
      for (const p of appends) p.reject(e as Error);
      return;
    }
    this.queue = appends.concat(this.queue);
  }

  async readAll(afterSeq = 0, limit = 1000): Promise<JournalEvent[]> {
    const head = this.headSeq;
    const from = Math.max(0, Math.floor(afterSeq)) + 1;
    const n = Math.min(Math.max(0, Math.floor(limit)), head - from + 1);
    if (n <= 0) return [];
    const prev = await this.hashAt(from - 1);
    const out: JournalEvent[] = [];
    const end = await this.walk(from, prev, (e) => out.push(e), from + n - 1);
    if (end.seq < from + n - 1) throw new JournalCorruptError(end.seq + 1, 'event missing');
    return out;
  }

  async readStream(stream: string, fromVersion = 1, limit = Number.MAX_SAFE_INTEGER): Promise<JournalEvent[]> {
    const from = Math.max(1, Math.floor(fromVersion));
    if (limit <= 0) return [];
    const index = (await this.storage.streamSeqs(stream, from, limit)).filter((e) => e.seq <= this.headSeq);
    const records = await this.storage.readRecordsAt(index.map((e) => e.seq));
    let prev: JournalEvent | undefined;
    return index.map(({ version, seq }, i) => {
      if (version !== from + i) throw new JournalCorruptError(seq, `stream ${stream} index skips version ${from + i}`);
      const record = records[i];
      if (record === undefined) throw new JournalCorruptError(seq, `event missing (stream ${stream} version ${version})`);
      const event = openRecord(seq, record, prev?.seq === seq - 1 ? prev.hash : undefined);
      prev = event;
      if (event.stream !== stream || event.version !== version) {
        throw new JournalCorruptError(seq, `index says ${stream}@${version}, event says ${event.stream}@${event.version}`);
      }
      return event;
    });
  }

  /** Hash of the event at seq (genesis for 0), checked against what is stored; a missing event is corruption. */
  private async hashAt(seq: number): Promise<string> {
    if (seq <= 0) return GENESIS_HASH;
    if (seq === this.headSeq) return this.headHash;
    const record = await this.storage.readRecord(seq);
    if (record === undefined) throw new JournalCorruptError(seq, 'event missing');
    return openRecord(seq, record).hash;
  }

  subscribe(afterSeq = 0): Observable<JournalEvent> {
    return new Observable<JournalEvent>((subscriber) => {
      // Listen first and buffer, then catch up from storage: whatever commits meanwhile is in the buffer,
      // and `last` drops what both paths saw, so the hand-over has no gap and no duplicate.
      let last = afterSeq;
      let live = false;
      const buffer: JournalEvent[] = [];
      const deliver = (e: JournalEvent) => {
        if (e.seq <= last) return;
        last = e.seq;
        subscriber.next(e);
      };
      const sub = this.committed.subscribe({
        next: (e) => (live ? deliver(e) : buffer.push(e)),
        complete: () => subscriber.complete(),
      });
      (async () => {
        for (;;) {
          const page = await this.readAll(last, PAGE);
          if (subscriber.closed) return;
          page.forEach(deliver);
          if (page.length < PAGE) break;
        }
        buffer.forEach(deliver);
        buffer.length = 0;
        live = true;
      })().catch((e) => subscriber.error(e));
      return () => sub.unsubscribe();
    });
  }

  async saveSnapshot(stream: string, snapshot: { version: number; state: unknown }): Promise<void> {
    const [entry] = await this.storage.streamSeqs(stream, snapshot.version, 1);
    if (!entry || entry.version !== snapshot.version || snapshot.version < 1) {
      throw new JournalError('journal_invalid_event', `cannot snapshot ${stream}@${snapshot.version}: no such event`);
    }
    const body = canonicalJson({
      stream,
      version: snapshot.version,
      seq: entry.seq,
      at: new Date(this.now()).toISOString(),
      event_hash: await this.hashAt(entry.seq),
      state: snapshot.state ?? null,
    });
    await this.storage.putSnapshot(stream, sha256(body) + body);
  }

  async loadSnapshot<TState = JsonValue>(stream: string): Promise<Snapshot<TState> | null> {
    const text = await this.storage.getSnapshot(stream);
    if (text === undefined) return null;
    const body = text.slice(HASH_LEN);
    let snap: Snapshot<TState> & { event_hash: string };
    try {
      snap = JSON.parse(body);
    } catch {
      throw new JournalCorruptError(0, `snapshot of ${stream} is not valid JSON`);
    }
    if (sha256(body) !== text.slice(0, HASH_LEN)) throw new JournalCorruptError(snap.seq, `snapshot of ${stream} was altered`);
    const record = await this.storage.readRecord(snap.seq);
    if (record === undefined) throw new JournalCorruptError(snap.seq, `event under the snapshot of ${stream} is missing`);
    if (openRecord(snap.seq, record).hash !== snap.event_hash) {
      throw new JournalCorruptError(snap.seq, `snapshot of ${stream} does not match its event`);
    }
    return { stream: snap.stream, version: snap.version, seq: snap.seq, at: snap.at, state: snap.state };
  }

  /**
   * A read model's snapshot (a projection over many streams): its state once it has folded every event up to `seq`.
   * Kept under a key no stream can have (stream names have no `/`), tied to that event's hash as a stream's is.
   */
  async saveProjection(name: string, snapshot: { seq: number; state: unknown }): Promise<void> {
    if (!STREAM_NAME.test(name)) throw new JournalError('journal_invalid_event', `invalid projection name ${JSON.stringify(name)}`);
    if (!Number.isInteger(snapshot.seq) || snapshot.seq < 1 || snapshot.seq > this.headSeq) {
      throw new JournalError('journal_invalid_event', `cannot snapshot projection ${name} at seq ${snapshot.seq}: no such event`);
    }
    const body = canonicalJson({ name, seq: snapshot.seq, at: new Date(this.now()).toISOString(), event_hash: await this.hashAt(snapshot.seq), state: snapshot.state ?? null });
    await this.storage.putSnapshot(`projection/${name}`, sha256(body) + body);
  }

  async loadProjection<TState = JsonValue>(name: string): Promise<{ seq: number; at: string; state: TState } | null> {
    const text = await this.storage.getSnapshot(`projection/${name}`);
    if (text === undefined) return null;
    const body = text.slice(HASH_LEN);
    let snap: { seq: number; at: string; event_hash: string; state: TState };
    try {
      snap = JSON.parse(body);
    } catch {
      throw new JournalCorruptError(0, `snapshot of projection ${name} is not valid JSON`);
    }
    if (sha256(body) !== text.slice(0, HASH_LEN)) throw new JournalCorruptError(snap.seq, `snapshot of projection ${name} was altered`);
    if ((await this.hashAt(snap.seq)) !== snap.event_hash) throw new JournalCorruptError(snap.seq, `snapshot of projection ${name} does not match its event`);
    return { seq: snap.seq, at: snap.at, state: snap.state };
  }

  isOpen(): boolean {
    return !this.closed;
  }

  /** Waits for queued appends to be written, then closes the storage. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.writing) await this.writing;
    this.committed.complete();
    await this.storage.close();
  }
}

