import { Logger } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { mapBounded } from '../common/map-bounded';
import { pastRetention } from '../common/retention-queue';
import { RetentionSweeper } from '../common/retention-sweeper';
import { SerialQueue } from '../common/serial-queue';
import { NodeDirectory, soleNode } from '../cluster/node-directory.port';
import { CommandStream, Evolve, SideWrite } from '../journal/command-handler';
import { Journal, JournalEvent } from '../journal/journal.port';
import { SessionHolder } from '../supervision/session-directory.port';
import { AliasIndex, NO_ALIASES, evolveAliases, numberSession } from './session-aliases';
import { SessionActor } from './session.actor';
import { evolve } from './session.decider';
import { SessionEnvStore } from './session-env.store';
import { SESSIONS_STREAM, SessionAliasAssignedData, SessionEvent, decodeRecord, sessionStream } from './session.events';
import { SessionSnapshot, accepts, stateOf } from './session.machine';
import { StoredSession, storeSession } from './session.snapshot';
import { SessionIndex, readIndex, rebuildSession } from './session-replay';

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
 * The session actors, rebuilt from the journal on boot (snapshot + tail, folded by the decider's evolve, so replay
 * never re-runs a side effect), and the streams the command path decides on: each session's `session-<id>`, and
 * `sessions`, which numbers aliases (never reused) and whose snapshot indexes the sessions in memory, so boot rebuilds
 * those and the ones numbered after it, not every session that ever was. An exited session leaves memory once its
 * retention has passed (unless a holder still needs it); the journal keeps it. Env values stay out of the journal, in
 * the SessionEnvStore, from before the session is journaled until it exits.
 */
export class SessionRegistry {
  private readonly actors = new Map<string, SessionActor>();
  private readonly byAlias = new Map<string, SessionActor>();
  /** External sessions by claude's session id: every run of a claude session (a resume) is the same session. */
  private readonly byClaudeSession = new Map<string, SessionActor>();
  /** Sessions by git work tree (set at creation, never changed): a status reads its tree's, not every session. */
  private readonly byWorkTree = new Map<string, Set<SessionActor>>();
  private aliases: AliasIndex = NO_ALIASES;
  /** Creations, one at a time: each numbers its alias at the version of stream `sessions` the one before it left. */
  readonly creations = new SerialQueue();
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
    readonly envs: SessionEnvStore,
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
    const index = await readIndex(this.journal);
    this.aliases = index.aliases;
    this.indexVersion = index.version;
    this.indexSaved = index.snapshotVersion;
    // Sessions past retention when the index was written are not rebuilt: only the journal has them now.
    const now = this.now();
    const wanted = [...index.clocks].filter(([, since]) => since === null || !pastRetention(since, this.retention.queue.retentionMs, now));
    const warn = (m: string) => this.logger.warn(m);
    const rebuilt = await mapBounded(wanted, REBUILD_WIDTH, async ([id, since]) => {
      const env = stored.has(id) ? await this.envs.load(id) : null;
      const r = await rebuildSession(this.journal, id, { env, node: this.nodes.self }, warn);
      if (!r) return null;
      const actor = new SessionActor(r.snapshot, r.version);
      return { actor, since: actor.live ? null : (since ?? actor.context.state_since) };
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
    if (s !== undefined && alias && Number(alias[1]) <= this.aliases.alias_count) return `coding session ${ref.toLowerCase()} is no longer in memory: ${why}`;
    return `no coding session ${JSON.stringify(ref)}${s === undefined ? '' : ` (${why})`}`;
  }

  /** The external session of a claude session id, while it is in memory. */
  findExternal(claudeSessionId: string): SessionActor | undefined {
    return this.byClaudeSession.get(claudeSessionId);
  }

  /** The sessions in memory: every live one, and exited ones until their retention has passed. */
  list(): SessionActor[] {
    return [...this.actors.values()];
  }

  /** The sessions in memory in the work tree (live or not), in the order they joined memory. */
  inWorkTree(workTree: string): Iterable<SessionActor> {
    return this.byWorkTree.get(workTree) ?? [];
  }

  /** Live sessions of this node (each node runs its own workers, up to its own cap); external sessions run no worker of ours. */
  liveCount(): number {
    let n = 0;
    for (const a of this.actors.values()) if (a.live && this.owns(a) && a.context.origin !== 'external') n++;
    return n;
  }

  /** A session's stream as the command path decides on it: the actor's state, which adopts what is appended. */
  streamOf(actor: SessionActor): CommandStream<SessionSnapshot | null> {
    return {
      name: sessionStream(actor.id),
      current: () => ({ state: actor.snapshot, version: actor.version }),
      adopt: (state, version) => actor.adopt(state as SessionSnapshot, version),
    };
  }

  /** The stream of a session being created (none yet): its actor joins the registry as its creation is applied. */
  newStream(id: string): CommandStream<SessionSnapshot | null> {
    return {
      name: sessionStream(id),
      current: () => ({ state: this.actors.get(id)?.snapshot ?? null, version: this.actors.get(id)?.version ?? 0 }),
      adopt: (state, version) => {
        if (state) this.add(new SessionActor(state, version));
      },
    };
  }

  /** The fold of a session's stored records: the decider's evolve. `env`: the values of a creation being appended. */
  evolveStored(env: Record<string, string> | null = null): Evolve<SessionSnapshot | null> {
    const context = { env, node: this.nodes.self };
    return (state, e) => {
      const fact = decodeRecord(e, context);
      return fact ? evolve(state, fact) : state;
    };
  }

  /** The alias stream `sessions` gives the session now. */
  nextAlias(sessionId: string): SessionAliasAssignedData {
    return numberSession(this.aliases, sessionId);
  }

  /** A session's numbering, appended with its creation at the version of stream `sessions` it was decided on. */
  numbering(data: SessionAliasAssignedData): SideWrite {
    return {
      stream: SESSIONS_STREAM,
      expectedVersion: this.indexVersion,
      events: [{ type: 'session.alias_assigned', data }],
      apply: (res) => {
        for (const e of res.events) this.aliases = evolveAliases(this.aliases, e);
        this.indexVersion = res.version;
      },
    };
  }

  /**
   * After the command path appended a session's records: its retention, its env values, its snapshot and the index's.
   * Only an exit leaves something to wait for (its env values removed).
   */
  appended(actor: SessionActor, stored: readonly JournalEvent[]): Promise<void> | undefined {
    if (this.indexVersion - this.indexSaved >= INDEX_SNAPSHOT_EVERY) this.saveIndex();
    if (Math.floor(actor.version / SNAPSHOT_EVERY) > Math.floor((actor.version - stored.length) / SNAPSHOT_EVERY)) this.snapshot(actor);
    const exit = stored.find((e) => e.type === 'session.exited');
    if (!exit) return undefined;
    this.retention.ended(actor.id, (exit.data as { at: number }).at);
    return this.envs.remove(actor.id).catch((e: unknown) => this.logger.warn(`env of ${actor.id} not removed: ${(e as Error).message}`));
  }

  private snapshot(actor: SessionActor): void {
    const state: StoredSession = storeSession(actor.snapshot);
    this.journal
      .saveSnapshot(sessionStream(actor.id), { version: actor.version, state })
      .catch((e: unknown) => this.logger.warn(`snapshot of ${actor.id} failed: ${(e as Error).message}`));
  }

  /**
   * An event another node appended, folded as boot's replay folds it (the same evolve, no effect), before it is
   * published: the numbering of stream `sessions`, a session created elsewhere, or the next event of one in memory.
   * Events this registry already holds (read by load(), or appended here) are skipped by their version.
   */
  private applyFollowed(e: JournalEvent): void {
    if (e.stream === SESSIONS_STREAM) {
      if (e.version <= this.indexVersion) return;
      this.indexVersion = e.version;
      this.aliases = evolveAliases(this.aliases, e);
      return;
    }
    if (!e.stream.startsWith('session-')) return;
    const id = e.stream.slice('session-'.length);
    const actor = this.actors.get(id);
    const fact = decodeRecord(e, { env: null, node: this.nodes.self });
    if (fact?.type === 'session.created') {
      if (!actor) this.add(new SessionActor(evolve(null, fact), e.version));
      return;
    }
    // A session not in memory: it left after its retention (or was never rebuilt, being past it); the journal keeps it.
    if (!actor || e.version <= actor.version) return;
    if (e.version !== actor.version + 1) this.logger.warn(`${e.stream}: followed version ${e.version} after ${actor.version}`);
    const before = actor.snapshot;
    const event = fact && accepts(before, fact) ? fact : null;
    if (fact && !event) this.logger.warn(`${e.stream}@${e.version}: ${e.type} from another node not accepted in ${stateOf(before)}, skipped`);
    actor.adopt(event ? evolve(before, event) : before, e.version);
    if (!event) return;
    if (stateOf(before) !== 'exited' && actor.state === 'exited') this.retention.ended(actor.id, event.at);
    if (this.owns(actor)) for (const h of this.foreignHandlers) h(actor, event, before);
  }

  private add(actor: SessionActor): void {
    const replaced = this.actors.get(actor.id);
    if (replaced && replaced !== actor) this.leaveWorkTree(replaced);
    this.actors.set(actor.id, actor);
    this.byAlias.set(actor.context.alias, actor);
    const external = actor.context.external;
    if (external) this.byClaudeSession.set(external.claude_session_id, actor);
    const tree = actor.context.work_tree;
    if (tree) this.byWorkTree.set(tree, (this.byWorkTree.get(tree) ?? new Set()).add(actor));
  }

  private leaveWorkTree(actor: SessionActor): void {
    const tree = actor.context.work_tree;
    const sharing = tree ? this.byWorkTree.get(tree) : undefined;
    if (sharing?.delete(actor) && sharing.size === 0) this.byWorkTree.delete(tree as string);
  }

  /** Lets the sessions go, except those a holder still needs: their retention starts again. */
  private evict(ids: string[]): string[] {
    const held: string[] = [];
    for (const id of ids) {
      const actor = this.actors.get(id);
      // A resumed external session is live again: its clock starts over when it next ends.
      if (!actor || actor.live) continue;
      if (this.holders.some((h) => h.holds(id))) {
        held.push(id);
        continue;
      }
      this.actors.delete(id);
      this.byAlias.delete(actor.context.alias);
      const external = actor.context.external;
      if (external && this.byClaudeSession.get(external.claude_session_id) === actor) this.byClaudeSession.delete(external.claude_session_id);
      this.leaveWorkTree(actor);
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
    const state: SessionIndex = { alias_count: this.aliases.alias_count, sessions };
    this.indexSaved = version;
    this.indexWrites = this.indexWrites
      .then(() => this.journal.saveSnapshot(SESSIONS_STREAM, { version, state }))
      .catch((e: unknown) => this.logger.warn(`index snapshot failed: ${(e as Error).message}`));
  }
}

/** An alias's number (`w12` → 12): sessions in creation order. */
export function aliasNumber(actor: SessionActor): number {
  return Number(actor.context.alias.slice(1));
}
