import { SerialQueue } from '../common/serial-queue';
import { CommandStream, handleCommand } from '../journal/command-handler';
import { Journal, JournalEvent } from '../journal/journal.port';
import { NotificationCommand, NotificationsState, decide, emptyNotificationsState, evolveStored } from './notification.decider';
import { NOTIFICATIONS_STREAM } from './notification.events';

/**
 * The stream `notifications` in memory: rebuilt from the journal at start, following what other nodes append, and
 * changed only through the command path, one command at a time (so a capability is used once).
 */
export class NotificationsStore {
  private current = emptyNotificationsState();
  private version = 0;
  private unfollow: (() => void) | null = null;
  private readonly queue = new SerialQueue();

  constructor(private readonly journal: Journal) {}

  get state(): NotificationsState {
    return this.current;
  }

  /** Rebuilds from the journal, then follows what other nodes sharing it append (from before it reads). */
  async start(): Promise<void> {
    const early: JournalEvent[] = [];
    let loaded = false;
    this.unfollow = this.journal.follow((e) => {
      if (e.stream !== NOTIFICATIONS_STREAM) return;
      if (loaded) this.fold(e);
      else early.push(e);
    });
    for (const e of await this.journal.readStream(NOTIFICATIONS_STREAM)) this.fold(e);
    loaded = true;
    for (const e of early) this.fold(e);
  }

  stop(): void {
    this.unfollow?.();
  }

  private fold(e: JournalEvent): void {
    if (e.version <= this.version) return;
    this.current = evolveStored(this.current, e);
    this.version = e.version;
  }

  private readonly stream: CommandStream<NotificationsState> = {
    name: NOTIFICATIONS_STREAM,
    current: () => ({ state: this.current, version: this.version }),
    adopt: (state, version) => {
      this.current = state;
      this.version = version;
    },
  };

  /** Decided, appended at the stream's version, applied; a refusal is thrown after the events it records (a refused action link). */
  command(cmd: NotificationCommand, actor = 'user'): Promise<NotificationsState> {
    return this.queue.run(async () => {
      await handleCommand(this.journal, this.stream, (state) => decide(cmd, state), evolveStored, { meta: { actor } });
      return this.current;
    });
  }
}
