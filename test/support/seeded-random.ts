/**
 * A small seeded pseudo-random source (mulberry32): the same seed gives the same sequence, so a fuzz run that
 * found something can be run again. Not for anything but tests.
 */
export class SeededRandom {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, max). */
  int(max: number): number {
    return Math.floor(this.next() * max);
  }

  /** An integer in [min, max], both included. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)];
  }

  /** One of the makers, chosen in proportion to its weight, called. */
  weighted<T>(choices: ReadonlyArray<readonly [number, () => T]>): T {
    const total = choices.reduce((sum, [w]) => sum + w, 0);
    let r = this.next() * total;
    for (const [w, make] of choices) {
      if (r < w) return make();
      r -= w;
    }
    return choices[choices.length - 1][1]();
  }
}
