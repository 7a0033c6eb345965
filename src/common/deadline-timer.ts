/** The longest delay setTimeout takes; a longer one fires after 1 ms instead. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * One timer at a deadline, an epoch-ms timestamp on the injected clock. A deadline past Node's longest timer is reached
 * in steps, and a step that wakes early (the clock went back) waits again. The timer never keeps the process alive.
 */
export class DeadlineTimer {
  private handle: ReturnType<typeof setTimeout> | null = null;
  private armedFor: number | null = null;

  constructor(
    private readonly now: () => number,
    private readonly fire: () => void,
  ) {}

  /** The deadline armed, or null. */
  get deadline(): number | null {
    return this.armedFor;
  }

  /** Arms the timer for `at`, replacing any other deadline; null or Infinity disarms it. */
  set(at: number | null): void {
    this.clear();
    if (at === null || !Number.isFinite(at)) return;
    this.armedFor = at;
    this.handle = setTimeout(() => {
      this.handle = null;
      if (this.now() < at) return this.set(at);
      this.armedFor = null;
      this.fire();
    }, Math.min(MAX_TIMER_DELAY_MS, Math.max(0, at - this.now())));
    this.handle.unref?.();
  }

  clear(): void {
    if (this.handle) clearTimeout(this.handle);
    this.handle = null;
    this.armedFor = null;
  }
}
