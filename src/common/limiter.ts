/** Runs jobs with at most `width` in flight, the others waiting their turn in call order; a failing job frees its place. */
export class Limiter {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly width: number) {}

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.running >= this.width) await new Promise<void>((go) => this.waiting.push(go));
    else this.running++;
    try {
      return await job();
    } finally {
      const next = this.waiting.shift();
      // The place passes to the next job as it is: the count stays.
      if (next) next();
      else this.running--;
    }
  }
}
