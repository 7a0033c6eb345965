/** Runs tasks one at a time per key (FIFO), different keys in parallel. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    // Tails never reject, so a failed task does not block the next one.
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    // Forget idle keys so the map does not grow with every id ever touched.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
