import { Logger } from '@nestjs/common';
import { EventBus } from '../bus/event-bus';
import { NewDomainEvent } from '../bus/domain-event';
import { DomainError } from '../common/domain-error';
import { mapBounded } from '../common/map-bounded';
import { Journal } from '../journal/journal.port';
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
import { SessionSnapshot, StoredSession, createSession, decide, restoreSession, stateOf, storeSession } from './session.machine';

/** Every this many events of a session stream, its state is snapshotted so boot replays only the tail. */
export const SNAPSHOT_EVERY = 64;
/**
 * Sessions rebuilt at once on boot. Each rebuild is a few small reads, each a round trip to LevelDB's threads:
 * one at a time they leave the cores idle, and all at once keep every read's data alive together, a third of
 * boot then going to garbage collection (bench:journal's 1,000 streams: 0.4-0.6 s eight at a time, 0.57-1.0 s
 * one at a time, 0.63-1.0 s all at once). 4 to 64 at once measured alike.
 */
export const REBUILD_WIDTH = 8;

/**
 * The session actors, rebuilt from the journal on boot (snapshot + tail, through the pure machine, so
 * replay never re-runs a side effect). Every accepted event is appended to `session-<id>` before the
 * actor adopts it; the bus publishes it once durable. The `sessions` stream indexes sessions and
 * numbers aliases, which are never reused. Env values stay out of the journal, in the SessionEnvStore, from
 * before the session is journaled until it exits.
 */
export class SessionRegistry {
  private readonly actors = new Map<string, SessionActor>();
  private readonly byAlias = new Map<string, SessionActor>();
  private aliasCount = 0;
  private aliasQueue: Promise<unknown> = Promise.resolve();
  private readonly logger = new Logger('sessions');

  constructor(
    private readonly journal: Journal,
    private readonly bus: EventBus,
    private readonly envs: SessionEnvStore,
  ) {}

  async load(): Promise<void> {
    // One directory read, not one file read per session: most sessions in a long history have exited.
    const stored = new Set(await this.envs.list());
    const assigned = (await this.journal.readStream(SESSIONS_STREAM))
      .filter((e) => e.type === 'session.alias_assigned')
      .map((e) => e.data as unknown as SessionAliasAssignedData);
    for (const { number } of assigned) this.aliasCount = Math.max(this.aliasCount, number);
    const actors = await mapBounded(assigned, REBUILD_WIDTH, async ({ session_id }) =>
      this.rebuild(session_id, stored.has(session_id) ? await this.envs.load(session_id) : null),
    );
    for (const actor of actors) if (actor) this.add(actor);
    // Values of sessions that exited, or whose creation never reached the journal (a crash in between).
    for (const id of stored) if (!this.actors.get(id)?.live) await this.envs.remove(id);
  }

  /** Numbers the alias, then journals the session's creation. */
  async create(input: Omit<SessionInput, 'alias'>): Promise<SessionActor> {
    const alias = await this.assignAlias(input.id);
    const full: SessionInput = { ...input, alias };
    const hasEnv = Object.keys(full.env).length > 0;
    if (hasEnv) await this.envs.save(full.id, full.env);
    let res: { version: number };
    try {
      res = await this.bus.emit(sessionStream(input.id), [{ type: 'session.created', data: createdData(full) }], { expectedVersion: 'no_stream' });
    } catch (e) {
      if (hasEnv) await this.envs.remove(full.id).catch(() => undefined);
      throw e;
    }
    const actor = new SessionActor(createSession(full), res.version);
    this.add(actor);
    return actor;
  }

  find(idOrAlias: string): SessionActor | undefined {
    // Aliases are written `w1`; `W1` means the same session (as in a supervision scope).
    return this.actors.get(idOrAlias) ?? this.byAlias.get(idOrAlias.toLowerCase());
  }

  get(idOrAlias: string): SessionActor {
    const actor = this.find(idOrAlias);
    if (!actor) throw new DomainError('not_found', `no coding session ${JSON.stringify(idOrAlias)}`);
    return actor;
  }

  list(): SessionActor[] {
    return [...this.actors.values()];
  }

  liveCount(): number {
    let n = 0;
    for (const a of this.actors.values()) if (a.live) n++;
    return n;
  }

  /**
   * Journals the event (with a state_changed record when the state moves) and adopts the next
   * snapshot; false, with nothing journaled, when the machine does not accept it. Call inside actor.run.
   */
  async apply(actor: SessionActor, event: SessionEvent, actorName = 'brainstem'): Promise<boolean> {
    const next = decide(actor.snapshot, event);
    if (!next) return false;
    const from = actor.state;
    const to = stateOf(next);
    const meta = { actor: actorName };
    const events: NewDomainEvent[] = [{ ...toJournalEvent(event), meta }];
    if (from !== to) events.push({ type: 'session.state_changed', data: { at: event.at, from, to }, meta });
    const res = await this.bus.emit(sessionStream(actor.id), events, { expectedVersion: actor.version });
    actor.adopt(next, res.version);
    if (to === 'exited' && from !== 'exited') {
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

  private assignAlias(sessionId: string): Promise<string> {
    const run = this.aliasQueue.then(async () => {
      const number = this.aliasCount + 1;
      const alias = `w${number}`;
      const data: SessionAliasAssignedData = { session_id: sessionId, alias, number };
      await this.bus.emit(SESSIONS_STREAM, [{ type: 'session.alias_assigned', data }]);
      this.aliasCount = number;
      return alias;
    });
    this.aliasQueue = run.catch(() => undefined);
    return run;
  }

  private add(actor: SessionActor): void {
    this.actors.set(actor.id, actor);
    this.byAlias.set(actor.context.alias, actor);
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
        snapshot = createSession(inputFromCreated(e.data as unknown as SessionCreatedData, env));
        continue;
      }
      const event = fromJournalEvent(e.type, e.data);
      if (!event || !snapshot) continue;
      const next = decide(snapshot, event);
      if (next) snapshot = next;
      else this.logger.warn(`replay of ${stream}@${e.version}: ${e.type} not accepted in ${stateOf(snapshot)}, skipped`);
    }
    // An alias whose creation never reached the journal (crash in between) names no session.
    return snapshot ? new SessionActor(snapshot, version) : null;
  }
}
