import { DeadlineTimer } from '../common/deadline-timer';
import { SerialQueue } from '../common/serial-queue';
import { CommandStream, SideWrite, handleCommand } from '../journal/command-handler';
import { Fence, Journal, JournalEvent } from '../journal/journal.port';
import { nextRoundForgotten } from './round-history';
import { SupervisionLog, reasonOf } from './supervision-log';
import { SupervisionDecision, SupervisionJournalEvent, SupervisionState, evolveStored, forgetExpired, initialSupervisionState } from './supervision.decider';
import { ROUND_OUTCOME } from './supervision.events';
import { StoredSupervision, restoreSupervision, storeSupervision } from './supervision.snapshot';

export const SUPERVISION_STREAM = 'supervision';
/**
 * The supervision state is snapshotted every this many events, or every as many events as rounds are kept if that is
 * more (a snapshot holds them all, so its cost per event stays bounded); boot reads the snapshot and the tail after it.
 */
export const SNAPSHOT_EVERY = 256;

export interface SupervisionStoreOptions {
  /** How long an ended round stays in memory (Infinity: every round). */
  retentionMs: number;
  now: () => number;
  log: SupervisionLog;
}

export interface StoreCommand {
  /** The lease term the append is fenced by, while this node leads. */
  fence?: Fence;
  /** Writes to other streams appended atomically with the decided events. */
  alongside?: (events: readonly SupervisionJournalEvent[]) => SideWrite[];
}

/**
 * Stream `supervision` as this node holds it: loaded from the snapshot and the tail after it, moved by commands on the
 * one command path and by the events other nodes append (folded with the same evolve), snapshotted every so often
 * while this node leads, and rid of ended rounds once their retention has passed. Each folded event, whoever appended
 * it, is handed to `folded` once applied.
 */
export class SupervisionStore {
  private state: SupervisionState = initialSupervisionState();
  private version = 0;
  /** The version of the last snapshot written. */
  private snapshotVersion = 0;
  private snapshotWrites: Promise<void> = Promise.resolve();
  /** Lets ended rounds (and run-out cooldowns) leave memory at the next one due. */
  private readonly forgetting: DeadlineTimer;

  readonly stream: CommandStream<SupervisionState> = {
    name: SUPERVISION_STREAM,
    current: () => ({ state: this.state, version: this.version }),
    adopt: (state, version) => {
      this.state = state;
      this.version = version;
    },
  };

  constructor(
    private readonly journal: Journal,
    /** Supervision's one queue: commands, and memory let go of, one at a time. */
    private readonly queue: SerialQueue,
    private readonly options: SupervisionStoreOptions,
    private readonly folded: (e: JournalEvent) => void,
  ) {
    this.forgetting = new DeadlineTimer(options.now, () => void this.queue.run(async () => this.forget()));
  }

  /** The state now. */
  get current(): SupervisionState {
    return this.state;
  }

  /** Rebuilds from the journal: the snapshot, then the events after it, less what has left memory since. */
  async load(): Promise<void> {
    const { now, retentionMs } = this.options;
    const stored = await this.journal.loadSnapshot<StoredSupervision>(SUPERVISION_STREAM);
    let state = stored ? restoreSupervision(stored.state, now(), retentionMs) : initialSupervisionState();
    let version = (this.snapshotVersion = stored?.version ?? 0);
    for (const e of await this.journal.readStream(SUPERVISION_STREAM, version + 1)) {
      state = evolveStored(state, e);
      version = e.version;
    }
    this.stream.adopt(forgetExpired(state, now(), retentionMs), version, []);
    this.armForgetting();
  }

  stop(): void {
    this.forgetting.clear();
  }

  /**
   * decide → append at the stream's version → apply → publish (handleCommand; a conflict is caught up with and decided
   * again), then each stored event is handed on. `leading`: the snapshot is written when due. Call inside the queue.
   */
  async execute(decide: (s: SupervisionState) => SupervisionDecision, cmd: StoreCommand, leading: boolean): Promise<readonly SupervisionJournalEvent[]> {
    const { events } = await handleCommand(this.journal, this.stream, decide, evolveStored, {
      fence: cmd.fence,
      catchUp: () => this.refollow(),
      alongside: cmd.alongside,
      afterAppend: async ({ stored }) => {
        for (const e of stored) this.react(e);
        if (leading && this.version - this.snapshotVersion >= Math.max(SNAPSHOT_EVERY, this.state.rounds.size)) this.snapshot();
      },
    });
    return events;
  }

  /** Reads what other nodes appended and folds the supervision events this node has not folded yet, in order. */
  async refollow(): Promise<void> {
    await this.journal.catchUp();
    for (const e of await this.journal.readStream(SUPERVISION_STREAM, this.version + 1)) this.follow(e);
  }

  /** A supervision event this node did not append itself (another node did, or it was caught up): folded as replay folds it. */
  follow(e: JournalEvent): void {
    if (e.version <= this.version) return;
    if (e.version > this.version + 1) {
      // Published while this node was not listening yet (its boot): the stream has the events between, in order.
      this.refollow().catch((err: unknown) => this.options.log.error(`following the supervision stream from version ${this.version + 1} failed: ${reasonOf(err)}`));
      return;
    }
    this.stream.adopt(evolveStored(this.state, e), e.version, [e]);
    this.react(e);
  }

  /** Snapshots the state once the changes queued before are applied (at shutdown: the next boot then reads no tail). */
  saveSnapshot(leading: boolean): Promise<void> {
    return this.queue.run(() => {
      if (leading && this.version > this.snapshotVersion) this.snapshot();
      return this.snapshotWrites;
    });
  }

  private react(e: JournalEvent): void {
    if (Object.hasOwn(ROUND_OUTCOME, e.type) || e.type === 'supervision.disabled') this.armForgetting();
    this.folded(e);
  }

  /** Arms the timer for the next ended round to leave memory, unless it is armed already. */
  private armForgetting(): void {
    if (Number.isFinite(this.options.retentionMs) && this.forgetting.deadline === null) this.forgetting.set(nextRoundForgotten(this.state.rounds, this.options.retentionMs));
  }

  private forget(): void {
    this.state = forgetExpired(this.state, this.options.now(), this.options.retentionMs);
    this.forgetting.set(nextRoundForgotten(this.state.rounds, this.options.retentionMs));
  }

  /** Writes the state as it is now after the snapshots before it, so an earlier one never lands last. A failed write costs the next boot a longer tail. */
  private snapshot(): void {
    const version = this.version;
    const state = storeSupervision(this.state, this.options.now());
    this.snapshotVersion = version;
    this.snapshotWrites = this.snapshotWrites
      .then(() => this.journal.saveSnapshot(SUPERVISION_STREAM, { version, state }))
      .catch((e: unknown) => this.options.log.warn(`snapshot failed: ${(e as Error).message}`));
  }
}
