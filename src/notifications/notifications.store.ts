import { SerialQueue } from '../common/serial-queue';
import { FollowedStream } from '../journal/followed-stream';
import { Journal } from '../journal/journal.port';
import { NotificationCommand, NotificationsState, decide, emptyNotificationsState, evolveStored } from './notification.decider';
import { NOTIFICATIONS_STREAM } from './notification.events';

/**
 * The stream `notifications` in memory: rebuilt from the journal at start, following what other nodes append, and
 * changed only through the command path, one command at a time (so a capability is used once).
 */
export class NotificationsStore {
  private readonly stream: FollowedStream<NotificationsState>;
  private readonly queue = new SerialQueue();

  constructor(journal: Journal) {
    this.stream = new FollowedStream(journal, NOTIFICATIONS_STREAM, emptyNotificationsState(), evolveStored);
  }

  get state(): NotificationsState {
    return this.stream.state;
  }

  /** Rebuilds from the journal, then follows what other nodes sharing it append (from before it reads). */
  start(): Promise<void> {
    return this.stream.start();
  }

  stop(): void {
    this.stream.stop();
  }

  /** Decided, appended at the stream's version, applied; a refusal is thrown after the events it records (a refused action link). */
  command(cmd: NotificationCommand, actor = 'user'): Promise<NotificationsState> {
    return this.queue.run(async () => {
      await this.stream.handle((state) => decide(cmd, state), { meta: { actor } });
      return this.stream.state;
    });
  }
}
