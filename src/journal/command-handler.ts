import { DomainError, DomainErrorCode } from '../common/domain-error';
import { AppendResult, EventMeta, Fence, Journal, JournalConflictError, JournalEvent, NewEvent, StreamAppend } from './journal.port';

/** Why a command is refused: a domain error code, and a message that tells the caller what to do instead. */
export interface Refusal {
  code: DomainErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * What a decider answers for a command: the events it produces, and why it is refused, if it is. A refusal may still
 * carry events (a confirmation found expired records its expiry): they are appended, then the refusal is thrown.
 */
export interface Decision<E> {
  events: readonly E[];
  error?: Refusal;
}

/** A stream as the feature that owns it holds it in memory: the state commands are decided against. */
export interface CommandStream<S> {
  readonly name: string;
  /** The state now, and the stream version it includes (0 before the stream's first event). */
  current(): { state: S; version: number };
  /** Takes the state the appended events led to, in the append's apply step: before anyone is told of them. */
  adopt(state: S, version: number, stored: readonly JournalEvent[]): void;
}

/** Folds one stored event into the state: the same fold replay uses. */
export type Evolve<S> = (state: S, event: JournalEvent) => S;

/** Events a decision implies on other streams (a scope's exclusions beside supervision's own event): written atomically with it. */
export interface SideWrite {
  stream: string;
  expectedVersion: number;
  events: readonly NewEvent[];
  /** The stream's owner adopts what was written (the apply step). */
  apply(result: AppendResult): void;
}

export interface CommandOptions<S, E> {
  /** The stored form of a decided event; by default the event is stored as it is (`{type, data}`). */
  encode?: (event: E) => NewEvent;
  /** Meta of every event appended (the actor); the journal fills in the rest. */
  meta?: Partial<EventMeta>;
  /** The lease term the append is fenced by (the supervisor's own appends). */
  fence?: Fence;
  /** Writes to other streams that go with the decided events, appended in the same atomic batch. */
  alongside?: (events: readonly E[], state: S) => SideWrite[];
  /** Brings the state up to date with what other writers appended; by default the journal's catch-up (its followers fold it). */
  catchUp?: () => Promise<void>;
  /** How often a command is decided again after a conflict before the conflict is answered. */
  retries?: number;
  /** The effects of what was appended, run once it is durable and applied: before a refusal that came with events is thrown. */
  afterAppend?: (handled: Handled<S, E>) => Promise<void> | void;
}

export interface Handled<S, E> {
  events: readonly E[];
  stored: readonly JournalEvent[];
  state: S;
  version: number;
}

/**
 * Decisions made again after another writer appended to the stream first, before the conflict is answered (409
 * journal_conflict). A writer with a backlog of appends to one stream can win many times in a row, each a round trip:
 * the loser goes on until that backlog is through, not a fixed few times.
 */
export const CONFLICT_RETRIES = 100;

/**
 * The one command path: load the state, decide, append at the expected version, apply, publish (the journal publishes
 * after the apply step). The conflict policy, stated once:
 * - every append names the version the decision was made at (`no_stream` for a stream not yet written);
 * - a conflict means another writer moved the stream first: catch up with it and decide again, up to `retries` times;
 * - a refusal is answered against the state caught up with other writers (decided again if they moved the stream), and
 *   thrown as a DomainError after the events the decision still records are appended;
 * - a decision with no events appends nothing;
 * - anything else the journal answers (fenced, unavailable) is thrown as it is, never retried here.
 * The caller serialises the commands of one stream (its queue or mailbox): this handles other writers, not its own.
 */
export async function handleCommand<S, E>(
  journal: Journal,
  stream: CommandStream<S>,
  decide: (state: S) => Decision<E>,
  evolve: Evolve<S>,
  options: CommandOptions<S, E> = {},
): Promise<Handled<S, E>> {
  const retries = options.retries ?? CONFLICT_RETRIES;
  const encode = options.encode ?? ((e: E) => e as unknown as NewEvent);
  const catchUp = options.catchUp ?? (() => journal.catchUp());
  for (let attempt = 0; ; attempt++) {
    const { state, version } = stream.current();
    const decision = decide(state);
    if (decision.error && decision.events.length === 0) {
      // Refused on what this writer knows: another writer may have moved the stream since, so the refusal is answered
      // against the state caught up with it (on a journal with one writer the catch-up is free and changes nothing).
      if (attempt < retries) {
        await catchUp();
        if (stream.current().version !== version) continue;
      }
      throw new DomainError(decision.error.code, decision.error.message, decision.error.details);
    }
    let handled: Handled<S, E>;
    try {
      handled = decision.events.length === 0 ? { events: [], stored: [], state, version } : await append(journal, stream, state, version, decision.events, evolve, encode, options);
    } catch (e) {
      if (!(e instanceof JournalConflictError) || attempt >= retries) throw e;
      await catchUp();
      continue;
    }
    // Awaited only when there is something to wait for: every command of a busy stream passes here.
    const after = handled.events.length > 0 ? options.afterAppend?.(handled) : undefined;
    if (after) await after;
    if (decision.error) throw new DomainError(decision.error.code, decision.error.message, decision.error.details);
    return handled;
  }
}

async function append<S, E>(
  journal: Journal,
  stream: CommandStream<S>,
  state: S,
  version: number,
  events: readonly E[],
  evolve: Evolve<S>,
  encode: (e: E) => NewEvent,
  options: CommandOptions<S, E>,
): Promise<Handled<S, E>> {
  const side = options.alongside?.(events, state) ?? [];
  const withMeta = (e: NewEvent): NewEvent => (options.meta ? { ...e, meta: { ...options.meta, ...e.meta } } : e);
  const writes: StreamAppend[] = [
    { stream: stream.name, events: events.map((e) => withMeta(encode(e))), expectedVersion: version === 0 ? 'no_stream' : version },
    ...side.map((w) => ({ stream: w.stream, events: w.events.map(withMeta), expectedVersion: w.expectedVersion === 0 ? ('no_stream' as const) : w.expectedVersion })),
  ];
  let handled: Handled<S, E> | null = null;
  await journal.appendAll(writes, {
    fence: options.fence,
    apply: ([own, ...others]) => {
      const next = own.events.reduce(evolve, state);
      stream.adopt(next, own.version, own.events);
      others.forEach((r, i) => side[i].apply(r));
      handled = { events, stored: own.events, state: next, version: own.version };
    },
  });
  return handled as unknown as Handled<S, E>;
}
