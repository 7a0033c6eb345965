import { DeadlineTimer } from './deadline-timer';
import { RetentionQueue } from './retention-queue';

/**
 * Lets ended items leave memory once their retention has run out: a RetentionQueue, and one timer at its next
 * deadline. `evict` gets the items due and answers those still held, whose clock then restarts; `swept` follows a
 * sweep that had items due. Nothing is evicted before start(): boot rebuilds first, and whoever holds items has loaded.
 */
export class RetentionSweeper {
  readonly queue: RetentionQueue;
  private readonly timer: DeadlineTimer;
  private running = false;

  constructor(
    retentionMs: number,
    private readonly now: () => number,
    private readonly evict: (ids: string[]) => string[],
    private readonly swept: () => void = () => undefined,
  ) {
    this.queue = new RetentionQueue(retentionMs);
    this.timer = new DeadlineTimer(now, () => this.sweep());
  }

  /** The item ended at `at`: its retention starts. */
  ended(id: string, at: number): void {
    this.queue.add(id, at);
    // Items come in time order: an armed deadline is already the earliest.
    if (this.running && this.timer.deadline === null) this.arm();
  }

  start(): void {
    this.running = true;
    this.arm();
  }

  stop(): void {
    this.running = false;
    this.timer.clear();
  }

  /** Evicts what is due now and arms the timer for what is next. */
  sweep(): void {
    const now = this.now();
    const due = this.queue.takeDue(now);
    if (due.length > 0) {
      for (const id of this.evict(due)) this.queue.add(id, now);
      this.swept();
    }
    this.arm();
  }

  private arm(): void {
    if (this.running) this.timer.set(this.queue.nextDue());
  }
}
