import { DomainError } from '../common/domain-error';
import { SideWrite, handleCommand } from '../journal/command-handler';
import { Journal } from '../journal/journal.port';
import { SessionActor } from './session.actor';
import { CreateSession, SessionCommand, WorktreeFact, decideRecords } from './session.decider';
import { CreateExternalSession } from './external-session.decider';
import { SessionFact, SessionRecord, encodeRecord, sessionStream } from './session.events';
import { Clock } from './session.ports';
import { SessionRegistry } from './session.registry';

/** A command as callers give it: the command path stamps its time. */
export type CommandBody<C extends SessionCommand = SessionCommand> = C extends SessionCommand ? Omit<C, 'at'> : never;

/** A creation as callers give it: its alias and the node's live count are read when it is decided. */
export type CreateBody = Omit<CreateSession, 'type' | 'at' | 'alias' | 'live_sessions'>;

/** A worktree added in the creation's turn, named with the alias it is numbered: added before the decision, taken back after a refusal. */
export interface CreationWorktree {
  add(alias: string): Promise<WorktreeFact>;
  undo(fact: WorktreeFact): Promise<void>;
}

const isFact = (r: SessionRecord): r is SessionFact => r.type !== 'session.state_changed';

/**
 * The sessions' commands on the one command path (handleCommand): decided by the session decider on the state the
 * registry holds, appended at the stream's version with the state changes they make, adopted, then published; on a
 * conflict with another node, caught up and decided again. Effects on workers are the callers', after this returns.
 */
export class SessionCommands {
  /** Shown the facts of each command journaled here on a session this node runs: its loop detector (session-loops.ts). */
  private observer: ((actor: SessionActor, facts: readonly SessionFact[]) => Promise<void> | undefined) | null = null;

  constructor(
    private readonly journal: Journal,
    private readonly registry: SessionRegistry,
    private readonly clock: Clock,
  ) {}

  now(): number {
    return this.clock.now();
  }

  observeWith(observer: (actor: SessionActor, facts: readonly SessionFact[]) => Promise<void> | undefined): void {
    this.observer = observer;
  }

  /**
   * Decides the command on the session's state and journals what it decided; a refusal throws. Call inside actor.run.
   * Chained rather than awaited: every worker signal passes here, and with the request id's async hooks on (Node 20)
   * each promise and each await costs it their hooks (bench/README.md, The signal path, profiled).
   */
  execute(actor: SessionActor, body: CommandBody, by = 'brainstem'): Promise<SessionFact[]> {
    return handleCommand(
      this.journal,
      this.registry.streamOf(actor),
      (state) => decideRecords({ ...body, at: this.clock.now() } as SessionCommand, state),
      this.registry.evolveStored(),
      { encode: encodeRecord, meta: { actor: by }, afterAppend: ({ stored }) => this.registry.appended(actor, stored) },
    ).then(({ events }) => {
      const facts = events.filter(isFact);
      const observed = this.observer && facts.length > 0 && this.registry.owns(actor) ? this.observer(actor, facts) : undefined;
      return observed ? observed.then(() => facts) : facts;
    });
  }

  /**
   * Numbers and creates a session in one append: its `session.created` and the alias stream `sessions` gives it, each
   * at its stream's version, so no alias is ever left without its session. Creations are decided one at a time, each
   * on the live count the one before it left. Env values are stored (outside the journal) before it is journaled.
   */
  async create(body: CreateBody, worktree?: CreationWorktree): Promise<SessionActor> {
    const keepsEnv = Object.keys(body.env).length > 0;
    if (keepsEnv) await this.registry.envs.save(body.id, body.env);
    try {
      await this.numbered(
        body.id,
        body.env,
        (alias, at, added) => ({ ...body, worktree: added ?? body.worktree, type: 'create', at, alias, live_sessions: this.registry.liveCount() }) satisfies CreateSession,
        worktree,
      );
    } catch (e) {
      if (keepsEnv) await this.registry.envs.remove(body.id).catch(() => undefined);
      throw e;
    }
    return this.registry.get(body.id);
  }

  /** An external session (a claude started outside Brainstem), numbered and created as any other. */
  async createExternal(body: Omit<CreateExternalSession, 'type' | 'at' | 'alias'>): Promise<SessionActor> {
    await this.numbered(body.id, {}, (alias, at) => ({ ...body, type: 'create_external', at, alias }));
    return this.registry.get(body.id);
  }

  /**
   * The creation `build` makes with the alias stream `sessions` gives it, appended with that numbering. A worktree is
   * added first, with the alias this node numbers next (another node numbering it first only changes the alias, not
   * the name), and removed again if the creation is refused.
   */
  private async numbered(
    id: string,
    env: Record<string, string>,
    build: (alias: string, at: number, added: WorktreeFact | null) => SessionCommand,
    worktree?: CreationWorktree,
  ): Promise<void> {
    await this.registry.creations.run(async () => {
      // Decided and numbered on the same reading of stream `sessions`, in each attempt.
      let numbered = this.registry.nextAlias(id);
      const added = worktree ? await worktree.add(numbered.alias) : null;
      return handleCommand(
        this.journal,
        this.registry.newStream(id),
        (state) => {
          numbered = this.registry.nextAlias(id);
          return decideRecords(build(numbered.alias, this.clock.now(), added), state);
        },
        this.registry.evolveStored(env),
        {
          encode: encodeRecord,
          alongside: () => [this.registry.numbering(numbered)],
          afterAppend: ({ stored }) => this.registry.appended(this.registry.get(id), stored),
        },
      ).catch(async (e: unknown) => {
        if (worktree && added) await worktree.undo(added);
        throw e;
      });
    });
  }

  /**
   * A session's exclusion change as a write beside another stream's (supervision's scope): at the session stream's
   * version, adopted when the batch is applied. Null when nothing changes (already so, or no such session).
   */
  exclusionWrite(id: string, excluded: boolean, by: string): SideWrite | null {
    const actor = this.registry.find(id);
    if (!actor) return null;
    const decision = decideRecords({ type: 'set_excluded', at: this.clock.now(), excluded }, actor.snapshot);
    if (decision.error || decision.events.length === 0) return null;
    const evolve = this.registry.evolveStored();
    return {
      stream: sessionStream(actor.id),
      expectedVersion: actor.version,
      events: decision.events.map((e) => ({ ...encodeRecord(e), meta: { actor: by } })),
      apply: (res) => actor.adopt(res.events.reduce(evolve, actor.snapshot) as NonNullable<typeof actor.snapshot>, res.version),
    };
  }

  /**
   * The session when this node runs it, at once (no such session: not_found, as commandable() answers); null when
   * another node does, for commandable() to judge. Signals look here first: a worker signals the node that runs it.
   */
  commandableHere(idOrAlias: string): SessionActor | null {
    const actor = this.registry.get(idOrAlias);
    return this.registry.owns(actor) ? actor : null;
  }

  /**
   * A session to command. One of another node's is decided here against the state this node follows, and its events
   * appended: the owner performs the effect when it applies them (its registry's foreign events); refused while the
   * owner is down, since nothing would act on them.
   */
  async commandable(idOrAlias: string): Promise<SessionActor> {
    const actor = this.registry.get(idOrAlias);
    if (this.registry.owns(actor)) return actor;
    const nodes = this.registry.nodes;
    const owner = this.registry.ownerOf(actor);
    // Judged down from the last periodic read: heard again first, so a node that has just joined is not refused.
    if (!nodes.isUp(owner)) await nodes.refresh().catch(() => undefined);
    if (!nodes.isUp(owner)) {
      throw new DomainError(
        'owner_unavailable',
        `session ${actor.context.alias} runs on node ${owner}, which has not been heard from within its lease (BRAINSTEM_NODE_LEASE_TTL_S): nothing would act on the command`,
        { node: owner },
      );
    }
    return actor;
  }
}
