import { Observable } from 'rxjs';

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };

export type ExpectedVersion = 'any' | 'no_stream' | number;

export interface EventMeta {
  actor: string;
  correlation_id: string | null;
  causation_seq: number | null;
}

/** One event as stored and published: the envelope of docs/architecture/decisions.md#the-journal-envelope. */
export interface JournalEvent<TType extends string = string, TData = JsonValue> {
  seq: number;
  stream: string;
  version: number;
  type: TType;
  at: string;
  data: TData;
  meta: EventMeta;
  hash: string;
}

export interface NewEvent {
  type: string;
  data?: unknown;
  meta?: Partial<EventMeta>;
}

export interface AppendOptions {
  expectedVersion?: ExpectedVersion;
  /**
   * The appender's in-memory apply step: runs once the events are durable and before any subscriber is told of
   * them, so whoever reads the appender's state on an event sees that state at least as new as the event.
   * Synchronous and free of effects (those follow the append); if it throws, the append rejects with its error,
   * and the events, durable already, are published all the same.
   */
  apply?: (result: AppendResult) => void;
  /**
   * Appends only the holder of that lease term may make: the storage commits them only while the lease still has that
   * holder and term (a shared storage checks under a lock in the commit; a single-node one always holds it), and
   * rejects them otherwise with JournalFencedError, writing none of their events.
   */
  fence?: Fence;
}

/** One stream's part of an atomic append over several streams. */
export interface StreamAppend {
  stream: string;
  events: readonly NewEvent[];
  expectedVersion?: ExpectedVersion;
}

export interface AppendAllOptions {
  /** As AppendOptions.apply, with each stream's result in the order the writes were given. */
  apply?: (results: AppendResult[]) => void;
  fence?: Fence;
}

export interface Fence {
  lease: string;
  holder: string;
  term: number;
}

export interface AppendResult {
  /** The stream's version after the append. */
  version: number;
  events: JournalEvent[];
}

export interface Snapshot<TState = JsonValue> {
  stream: string;
  /** Stream version the state includes; replay continues at version + 1. */
  version: number;
  seq: number;
  at: string;
  state: TState;
}

export interface JournalHead {
  seq: number;
  hash: string;
}

export interface VerifyReport {
  ok: boolean;
  head_seq: number;
  head_hash: string;
  checked: number;
  first_bad_seq?: number;
  error?: string;
}

/** Read-only view handed to plugins and audits. */
export interface JournalReader {
  head(): JournalHead;
  /** The head when this journal was opened: the end of the history inherited from before this process. */
  openedHead(): JournalHead;
  readStream(stream: string, fromVersion?: number, limit?: number): Promise<JournalEvent[]>;
  readAll(afterSeq?: number, limit?: number): Promise<JournalEvent[]>;
  /** Catches up from afterSeq, then continues live, without gap or duplicate at the hand-over. */
  subscribe(afterSeq?: number): Observable<JournalEvent>;
  streamVersion(stream: string): Promise<number>;
  loadSnapshot<TState = JsonValue>(stream: string): Promise<Snapshot<TState> | null>;
  verify(): Promise<VerifyReport>;
}

/** The journal port: the one source of truth. Adapters: LevelDB (embedded default) and in-memory (tests). */
export interface Journal extends JournalReader {
  append(stream: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult>;
  /**
   * Appends to several streams at once: every stream's expected version is checked, and either every event is written
   * (one contiguous batch, in the order given) or none is; a conflict on any stream refuses the whole append.
   */
  appendAll(writes: readonly StreamAppend[], options?: AppendAllOptions): Promise<AppendResult[]>;
  saveSnapshot(stream: string, snapshot: { version: number; state: unknown }): Promise<void>;
  /** Snapshots a read model folded from many streams, as of the event at `seq`. */
  saveProjection(name: string, snapshot: { seq: number; state: unknown }): Promise<void>;
  /** A read model's snapshot (usage): its state once it folded every event up to `seq`; null when it has none. */
  loadProjection<TState = JsonValue>(name: string): Promise<{ seq: number; at: string; state: TState } | null>;
  /** Every event after it has been durably appended and its appender's apply step has run, in seq order. */
  readonly committed$: Observable<JournalEvent>;
  /**
   * Registers the apply step for events other writers of a shared journal appended: each such event is applied by
   * every follower, in seq order, before it is published on committed$, as an appender's own apply step runs before
   * its events are (so a subscriber reads state at least as new as the event, whichever node wrote it). Synchronous
   * and free of effects. Never called on a journal with a single writer. Returns the unregistration.
   */
  follow(apply: (event: JournalEvent) => void): () => void;
  /** Reads (applies and publishes) what other writers of a shared journal appended up to now; a no-op for a single writer. */
  catchUp(): Promise<void>;
  /** Whether it takes appends: true from open until close() is called. */
  isOpen(): boolean;
  close(): Promise<void>;
}

export type JournalErrorCode =
  | 'journal_conflict'
  | 'journal_corrupt'
  | 'journal_locked'
  | 'journal_closed'
  | 'journal_unavailable'
  | 'journal_invalid_event'
  | 'journal_fenced'
  | 'journal_schema_mismatch';

export class JournalError extends Error {
  constructor(
    readonly code: JournalErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'JournalError';
  }
}

export class JournalConflictError extends JournalError {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super('journal_conflict', `stream ${stream}: expected version ${String(expected)}, actual ${actual}`);
  }
}

export class JournalCorruptError extends JournalError {
  constructor(
    readonly seq: number,
    readonly detail: string,
  ) {
    super('journal_corrupt', `journal is corrupt at seq ${seq}: ${detail}`);
  }
}

/** A fenced append whose lease has moved on (another holder, a later term): nothing of it was written. */
export class JournalFencedError extends JournalError {
  constructor(readonly fence: Fence) {
    super('journal_fenced', `the ${fence.lease} lease is no longer held by ${fence.holder} in term ${fence.term}: append refused`);
  }
}
