/**
 * What has ended and waits to leave memory, oldest first. Each item leaves `retentionMs` after its clock started: when
 * it ended, or when it was last found still held. Pure: the caller passes the time. Items are added in time order (a
 * restarted clock starts now, after every other), so the first item is always the next one due.
 */
export class RetentionQueue {
  private readonly clocks = new Map<string, number>();

  /** Infinity keeps everything. */
  constructor(readonly retentionMs: number) {}

  get size(): number {
    return this.clocks.size;
  }

  /** Starts the item's clock at `since`, or restarts it (the item moves to the end). */
  add(id: string, since: number): void {
    this.clocks.delete(id);
    this.clocks.set(id, since);
  }

  delete(id: string): void {
    this.clocks.delete(id);
  }

  clockOf(id: string): number | undefined {
    return this.clocks.get(id);
  }

  /** The items whose retention has run out at `now`, oldest first, taken off the queue. */
  takeDue(now: number): string[] {
    const due: string[] = [];
    for (const [id, since] of this.clocks) {
      if (!pastRetention(since, this.retentionMs, now)) break;
      due.push(id);
    }
    for (const id of due) this.clocks.delete(id);
    return due;
  }

  /** When the next item is due (epoch ms; Infinity when nothing ever is), or null when none waits. */
  nextDue(): number | null {
    for (const [, since] of this.clocks) return since + this.retentionMs;
    return null;
  }

  /** Each waiting item and when its clock started, oldest first. */
  entries(): Array<[string, number]> {
    return [...this.clocks];
  }
}

/** Whether an item whose clock started at `since` has outlived its retention at `now`. */
export function pastRetention(since: number, retentionMs: number, now: number): boolean {
  return since + retentionMs <= now;
}
