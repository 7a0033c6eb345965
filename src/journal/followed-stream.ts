import { CommandOptions, CommandStream, Decision, Evolve, Handled, handleCommand } from './command-handler';
import { Journal, JournalEvent } from './journal.port';

/**
 * One stream's state as the feature that owns it holds it in memory: rebuilt from the journal at start, kept current
 * with what other writers of a shared journal append (followed from before it is read, so nothing falls between the
 * read and the follow), and the stream its commands are decided on. The caller serialises its commands.
 */
export class FollowedStream<S> implements CommandStream<S> {
  private value: S;
  private at = 0;
  private unfollow: (() => void) | null = null;

  constructor(
    private readonly journal: Journal,
    readonly name: string,
    private readonly initial: S,
    private readonly evolve: Evolve<S>,
  ) {
    this.value = initial;
  }

  get state(): S {
    return this.value;
  }

  get version(): number {
    return this.at;
  }

  current(): { state: S; version: number } {
    return { state: this.value, version: this.at };
  }

  adopt(state: S, version: number): void {
    this.value = state;
    this.at = version;
  }

  /** Reads the stream from its start (again, from its initial state, when started before) and follows it. */
  async start(): Promise<void> {
    this.stop();
    this.value = this.initial;
    this.at = 0;
    let early: JournalEvent[] | null = [];
    this.unfollow = this.journal.follow((e) => {
      if (e.stream !== this.name) return;
      if (early) early.push(e);
      else this.fold(e);
    });
    for (const e of await this.journal.readStream(this.name)) this.fold(e);
    const followed = early;
    early = null;
    for (const e of followed) this.fold(e);
  }

  stop(): void {
    this.unfollow?.();
    this.unfollow = null;
  }

  /** The one command path on this stream: decided on its state, appended at its version, adopted. */
  handle<E>(decide: (state: S) => Decision<E>, options?: CommandOptions<S, E>): Promise<Handled<S, E>> {
    return handleCommand(this.journal, this, decide, this.evolve, options);
  }

  /** An event read or followed: folded once, in version order. */
  private fold(e: JournalEvent): void {
    if (e.version <= this.at) return;
    this.value = this.evolve(this.value, e);
    this.at = e.version;
  }
}
