import { Logger } from '@nestjs/common';
import { EventBus } from '../bus/event-bus';
import { NewDomainEvent } from '../bus/domain-event';
import { DomainError } from '../common/domain-error';
import { mapBounded } from '../common/map-bounded';
import { pastRetention } from '../common/retention-queue';
import { RetentionSweeper } from '../common/retention-sweeper';
import { NodeDirectory, soleNode } from '../cluster/node-directory.port';
import { Journal, JournalConflictError, JournalEvent } from '../journal/journal.port';
import { SessionHolder } from '../supervision/session-directory.port';
import { SessionActor } from './session.actor';
import { SessionEnvStore } from './session-env.store';
import {
  SESSIONS_STREAM,
  SessionAliasAssignedData,
  SessionCreatedData,
  SessionEvent,
  SessionInput,
  createdData,
  fromJournalEvent,
  inputFromCreated,
  sessionStream,
  toJournalEvent,
} from './session.events';
import { SessionSnapshot, StoredSession, createSession, nextSnapshot, restoreSession, stateOf, storeSession } from './session.machine';

/** Every this many events of a session stream, its state is snapshotted so boot replays only the tail. */
export const SNAPSHOT_EVERY = 64;
/**
 * Sessions rebuilt at once on boot. Each rebuild is a few small reads, each a round trip to LevelDB's threads:
 * one at a time they leave the cores idle, and all at once keep every read's data alive together, a third of
 * boot then going to garbage collection (bench:journal's 1,000 streams: 0.4-0.6 s eight at a time, 0.57-1.0 s
 * one at a time, 0.63-1.0 s all at once). 4 to 64 at once measured alike.
 */
export const REBUILD_WIDTH = 8;
/** Every this many aliases assigned, the index of sessions in memory is snapshotted: boot reads only the tail after it. */
export const INDEX_SNAPSHOT_EVERY = 64;

/** The snapshot of stream `sessions`: the aliases numbered so far, and each session in memory with its retention clock (null while live). */
interface SessionIndex {
  alias_count: number;
  sessions: Array<[string, number | null]>;
}

export interface RetentionOptions {
  /** How long an exited session stays in memory; absent keeps every session. */
  retention_s?: number;
  now?: () => number;
  /** The nodes sharing the journal (this one owns the sessions it creates); alone on its journal when absent. */
  nodes?: NodeDirectory;
}

/** An event another node appended to a session this node owns, once applied: the owner performs its effect. */
export type ForeignSessionEvent = (actor: SessionActor, event: SessionEvent, before: SessionSnapshot) => void;

/**
 * Appends of an alias that another node's numbering beat, before the create fails: a node creating many sessions at
 * once can win many rounds in a row, so the loser goes on until that backlog is through.
 */
const ALIAS_ATTEMPTS = 100;

/**
 * The session actors, rebuilt from the journal on boot (snapshot + tail, through the pure machine, so
 * replay never re-runs a side effect). Every accepted event is appended to `session-<id>`, the actor adopts
 * it once durable, and only then does the bus publish it: a subscriber reading the registry sees the new state.
 * The `sessions` stream numbers aliases, which are never reused; its snapshot indexes the sessions in memory, so boot rebuilds those and the ones numbered after it, not
 * every session that ever was. An exited session leaves memory once its retention has passed (unless a holder
 * still needs it); the journal keeps it. Env values stay out of the journal, in the SessionEnvStore, from
 * before the session is journaled until it exits.
 */
export class SessionRegistry {
  private readonly actors = new Map<string, SessionActor>();
  private readonly byAlias = new Map<string, SessionActor>();
  /** Sessions numbered whose creation is not journaled yet: the index must name them. */
  private readonly numbered = new Set<string>();
  private aliasCount = 0;
  private aliasQueue: Promise<unknown> = Promise.resolve();
  private readonly logger = new Logger('sessions');
  private readonly retention: RetentionSweeper;
  private readonly holders: SessionHolder[] = [];
  private readonly now: () => number;
  /** The version of stream `sessions` the registry has seen, and the one its index was last snapshotted at. */
  private indexVersion = 0;
  private indexSaved = 0;
  private indexWrites: Promise<void> = Promise.resolve();
  private closed = false;
  readonly nodes: NodeDirectory;
  private readonly foreignHandlers: ForeignSessionEvent[] = [];
  /** Events of other nodes that arrive while load() reads the journal, applied once it has (those it read are skipped). */
  private followed: JournalEvent[] | null = null;
  private unfollow: (() => void) | null = null;

  constructor(
    private readonly journal: Journal,
    private readonly bus: EventBus,
    private readonly envs: SessionEnvStore,
    private readonly options: RetentionOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.nodes = options.nodes ?? soleNode('local');
    const retentionMs = options.retention_s === undefined ? Infinity : options.retention_s * 1000;
    this.retention = new RetentionSweeper(retentionMs, this.now, (ids) => this.evict(ids), () => this.saveIndex());
  }

  async load(): Promise<void> {
    // Followed from before the reads, so an event another node appends meanwhile is either read or applied after.
    this.followed = [];
    this.unfollow = this.journal.follow((e) => (this.followed ? this.followed.push(e) : this.applyFollowed(e)));
    // One directory read, not one file read per session: most sessions in a long history have exited.
    const stored = new Set(await this.envs.list());
    const index = await this.journal.loadSnapshot<SessionIndex>(SESSIONS_STREAM);
    const clocks = new Map<string, number | null>(index?.state.sessions ?? []);
    this.aliasCount = index?.state.alias_count ?? 0;
    this.indexVersion = this.indexSaved = index?.version ?? 0;
    for (const e of await this.journal.readStream(SESSIONS_STREAM, this.indexVersion + 1)) {
      this.indexVersion = e.version;
      if (e.type !== 'session.alias_assigned') continue;
      const { session_id, number } = e.data as unknown as SessionAliasAssignedData;
      this.aliasCount = Math.max(this.aliasCount, number);
      clocks.set(session_id, null);
    }
    // Sessions past retention when the index was written are not rebuilt: only the journal has them now.
    const now = this.now();
    const wanted = [...clocks].filter(([, since]) => since === null || !pastRetention(since, this.retention.queue.retentionMs, now));
    const rebuilt = await mapBounded(wanted, REBUILD_WIDTH, async ([id, since]) => {
      const actor = await this.rebuild(id, stored.has(id) ? await this.envs.load(id) : null);
      return actor && { actor, since: actor.live ? null : (since ?? actor.context.state_since) };
    });
    const kept = rebuilt.filter((r) => r !== null).sort((a, b) => aliasNumber(a.actor) - aliasNumber(b.actor));
    for (const { actor } of kept) this.add(actor);
    // Retention clocks in time order; the first sweep (after start) lets go of those already past it.
    const ended = kept.filter((r) => r.since !== null).sort((a, b) => (a.since as number) - (b.since as number));
    for (const { actor, since } of ended) this.retention.ended(actor.id, since as number);
    // Values of sessions that exited, or whose creation never reached the journal (a crash in between).
    for (const id of stored) if (!this.actors.get(id)?.live) await this.envs.remove(id);
    const followed = this.followed;
    this.followed = null;
    for (const e of followed) this.applyFollowed(e);
    // The next boot starts here (a journal written before the index is read whole this once).
    this.saveIndex();
    await this.indexWrites;
  }

  /**
   * Starts letting exited sessions go, once every holder has loaded what it holds (a holder loads after this
   * registry: awaiting here would wait for it forever).
   */
  async startRetention(): Promise<void> {
    await Promise.allSettled(this.holders.map((h) => h.loaded));
    if (!this.closed) this.retention.start();
  }

  holdWhile(holder: SessionHolder): void {
    this.holders.push(holder);
  }

  /** Stops the retention timer and snapshots the index, so the next boot reads no tail. */
  async close(): Promise<void> {
    this.closed = true;
    this.unfollow?.();
    this.retention.stop();
    this.saveIndex();
    await this.indexWrites;
  }

  /** Numbers the alias, then journals the session's creation. */
  async create(input: Omit<SessionInput, 'alias'>): Promise<SessionActor> {
    const alias = await this.assignAlias(input.id);
    const full: SessionInput = { ...input, alias };
    const hasEnv = Object.keys(full.env).length > 0;
    let actor: SessionActor | undefined;
    try {
      if (hasEnv) await this.envs.save(full.id, full.env);
      await this.bus.emit(sessionStream(input.id), [{ type: 'session.created', data: createdData(full) }], {
        expectedVersion: 'no_stream',
        apply: (res) => {
          actor = new SessionActor(createSession(full), res.version);
          this.add(actor);
        },
      });
    } catch (e) {
      this.numbered.delete(full.id);
      if (hasEnv) await this.envs.remove(full.id).catch(() => undefined);
      throw e;
    }
    return actor as SessionActor;
  }

  /** Whether this node runs the session's worker (a session created before nodes belongs to whichever reads it). */
  owns(actor: SessionActor): boolean {
    return (actor.context.node ?? this.nodes.self) === this.nodes.self;
  }

  /** The node that runs the session's worker. */
  ownerOf(actor: SessionActor): string {
    return actor.context.node ?? this.nodes.self;
  }

  /** Called with each event another node appends to a session of this node, after the session applied it. */
  onForeignEvent(handler: ForeignSessionEvent): void {
    this.foreignHandlers.push(handler);
  }

  /** Reads what other nodes appended (their events applied and published), e.g. before deciding again after a conflict. */
  catchUp(): Promise<void> {
    return this.journal.catchUp();
  }

  find(idOrAlias: string): SessionActor | undefined {
    // Aliases are written `w1`; `W1` means the same session (as in a supervision scope).
    return this.actors.get(idOrAlias) ?? this.byAlias.get(idOrAlias.toLowerCase());
  }

  get(idOrAlias: string): SessionActor {
    const actor = this.find(idOrAlias);
    if (!actor) throw new DomainError('not_found', this.notFound(idOrAlias));
    return actor;
  }

  /** Whether the session was numbered and has left memory can be told from an alias; from an id, only the journal could. */
  private notFound(ref: string): string {
    const s = this.options.retention_s;
    const why = `exited sessions leave memory ${s} s after they exit (BRAINSTEM_RETENTION_S); the journal keeps their events (stream session-<id>)`;
    const alias = /^w([1-9]\d{0,14})$/i.exec(ref);
    if (s !== undefined && alias && Number(alias[1]) <= this.aliasCount) return `coding session ${ref.toLowerCase()} is no longer in memory: ${why}`;
    return `no coding session ${JSON.stringify(ref)}${s === undefined ? '' : ` (${why})`}`;
  }

  /** The sessions in memory: every live one, and exited ones until their retention has passed. */
  list(): SessionActor[] {
    return [...this.actors.values()];
  }

  /** Live sessions of this node (each node runs its own workers, up to its own cap). */
  liveCount(): number {
    let n = 0;
    for (const a of this.actors.values()) if (a.live && this.owns(a)) n++;
    return n;
  }

  /**
   * Journals the event (with a state_changed record when the state moves) and adopts the next
   * snapshot; false, with nothing journaled, when the machine does not accept it. Call inside actor.run.
   */
  async apply(actor: SessionActor, event: SessionEvent, actorName = 'brainstem'): Promise<boolean> {
    const next = nextSnapshot(actor.snapshot, event);
    if (!next) return false;
    const from = actor.state;
    const to = stateOf(next);
    const meta = { actor: actorName };
    const events: NewDomainEvent[] = [{ ...toJournalEvent(event), meta }];
    if (from !== to) events.push({ type: 'session.state_changed', data: { at: event.at, from, to, cause: event.type }, meta });
    const res = await this.bus.emit(sessionStream(actor.id), events, { expectedVersion: actor.version, apply: (r) => actor.adopt(next, r.version) });
    if (to === 'exited' && from !== 'exited') {
      this.retention.ended(actor.id, event.at);
      await this.envs.remove(actor.id).catch((e: unknown) => this.logger.warn(`env of ${actor.id} not removed: ${(e as Error).message}`));
    }
    if (Math.floor(res.version / SNAPSHOT_EVERY) > Math.floor((res.version - events.length) / SNAPSHOT_EVERY)) this.snapshot(actor);
    return true;
  }

  private snapshot(actor: SessionActor): void {
    const state: StoredSession = storeSession(actor.snapshot);
    this.journal
      .saveSnapshot(sessionStream(actor.id), { version: actor.version, state })
      .catch((e: unknown) => this.logger.warn(`snapshot of ${actor.id} failed: ${(e as Error).message}`));
  }

  /**
   * Numbers the session: at the version of stream `sessions` this registry has seen, so two nodes never number
   * two sessions alike; another node's numbering that came first is followed (a conflict), and the next number tried.
   */
  private assignAlias(sessionId: string): Promise<string> {
    const run = this.aliasQueue.then(async () => {
      for (let attempt = 1; ; attempt++) {
        const number = this.aliasCount + 1;
        const alias = `w${number}`;
        const data: SessionAliasAssignedData = { session_id: sessionId, alias, number };
        try {
          await this.bus.emit(SESSIONS_STREAM, [{ type: 'session.alias_assigned', data }], {
            expectedVersion: this.indexVersion,
            apply: (res) => {
              this.aliasCount = number;
              this.indexVersion = res.version;
              this.numbered.add(sessionId);
            },
          });
        } catch (e) {
          if (!(e instanceof JournalConflictError) || attempt >= ALIAS_ATTEMPTS) throw e;
          await this.journal.catchUp();
          continue;
        }
        if (this.indexVersion - this.indexSaved >= INDEX_SNAPSHOT_EVERY) this.saveIndex();
        return alias;
      }
    });
    this.aliasQueue = run.catch(() => undefined);
    return run;
  }

  /**
   * An event another node appended, applied as boot's replay applies it (the same pure machine, no effect), before
   * it is published: the numbering of stream `sessions`, a session created elsewhere, or the next event of one in
   * memory. Events this registry already holds (read by load()) are skipped by their version.
   */
  private applyFollowed(e: JournalEvent): void {
    if (e.stream === SESSIONS_STREAM) {
      if (e.version <= this.indexVersion) return;
      this.indexVersion = e.version;
      if (e.type === 'session.alias_assigned') this.aliasCount = Math.max(this.aliasCount, (e.data as unknown as SessionAliasAssignedData).number);
      return;
    }
    if (!e.stream.startsWith('session-')) return;
    const id = e.stream.slice('session-'.length);
    const actor = this.actors.get(id);
    if (e.type === 'session.created') {
      if (actor) return;
      this.add(new SessionActor(createSession(this.withNode(inputFromCreated(e.data as unknown as SessionCreatedData, null))), e.version));
      return;
    }
    // A session not in memory: it left after its retention (or was never rebuilt, being past it); the journal keeps it.
    if (!actor || e.version <= actor.version) return;
    if (e.version !== actor.version + 1) this.logger.warn(`${e.stream}: followed version ${e.version} after ${actor.version}`);
    const event = fromJournalEvent(e.type, e.data);
    const before = actor.snapshot;
    const next = event ? nextSnapshot(before, event) : null;
    if (event && !next) this.logger.warn(`${e.stream}@${e.version}: ${e.type} from another node not accepted in ${stateOf(before)}, skipped`);
    actor.adopt(next ?? before, e.version);
    if (!event || !next) return;
    if (stateOf(before) !== 'exited' && stateOf(next) === 'exited') this.retention.ended(actor.id, event.at);
    if (this.owns(actor)) for (const h of this.foreignHandlers) h(actor, event, before);
  }

  /** A session's input names its node; one created before nodes is taken as this node's. */
  private withNode(input: SessionInput): SessionInput {
    return input.node === undefined ? { ...input, node: this.nodes.self } : input;
  }

  private add(actor: SessionActor): void {
    this.actors.set(actor.id, actor);
    this.byAlias.set(actor.context.alias, actor);
    this.numbered.delete(actor.id);
  }

  /** Lets the sessions go, except those a holder still needs: their retention starts again. */
  private evict(ids: string[]): string[] {
    const held: string[] = [];
    for (const id of ids) {
      const actor = this.actors.get(id);
      if (!actor) continue;
      if (this.holders.some((h) => h.holds(id))) {
        held.push(id);
        continue;
      }
      this.actors.delete(id);
      this.byAlias.delete(actor.context.alias);
    }
    return held;
  }

  /**
   * Snapshots the index at the version seen: taken now, written in order after the writes before it, so a later
   * index is never overwritten by an earlier one. It only spares boot reads: the tail after it is still replayed.
   */
  private saveIndex(): void {
    if (this.indexVersion === 0) return;
    const version = this.indexVersion;
    const sessions: SessionIndex['sessions'] = [];
    for (const a of this.actors.values()) sessions.push([a.id, a.live ? null : (this.retention.queue.clockOf(a.id) ?? a.context.state_since)]);
    for (const id of this.numbered) sessions.push([id, null]);
    const state: SessionIndex = { alias_count: this.aliasCount, sessions };
    this.indexSaved = version;
    this.indexWrites = this.indexWrites
      .then(() => this.journal.saveSnapshot(SESSIONS_STREAM, { version, state }))
      .catch((e: unknown) => this.logger.warn(`index snapshot failed: ${(e as Error).message}`));
  }

  /** `env`: the values kept outside the journal, if any. */
  private async rebuild(id: string, env: Record<string, string> | null): Promise<SessionActor | null> {
    const stream = sessionStream(id);
    const snap = await this.journal.loadSnapshot<StoredSession>(stream);
    let snapshot: SessionSnapshot | null = snap ? restoreSession(snap.state, env) : null;
    let version = snap?.version ?? 0;
    for (const e of await this.journal.readStream(stream, version + 1)) {
      version = e.version;
      if (e.type === 'session.created') {
        snapshot = createSession(this.withNode(inputFromCreated(e.data as unknown as SessionCreatedData, env)));
        continue;
      }
      const event = fromJournalEvent(e.type, e.data);
      if (!event || !snapshot) continue;
      const next = nextSnapshot(snapshot, event);
      if (next) snapshot = next;
      else this.logger.warn(`replay of ${stream}@${e.version}: ${e.type} not accepted in ${stateOf(snapshot)}, skipped`);
    }
    // An alias whose creation never reached the journal (crash in between) names no session.
    return snapshot ? new SessionActor(snapshot, version) : null;
  }
}

/** An alias's number (`w12` → 12): sessions in creation order. */
export function aliasNumber(actor: SessionActor): number {
  return Number(actor.context.alias.slice(1));
}
