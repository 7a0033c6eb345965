/**
 * Maps items through `fn` with at most `width` calls in flight, and returns the results in item order.
 * After a call fails no new one starts; the first failure rejects once the calls in flight have settled.
 */
export async function mapBounded<T, R>(items: readonly T[], width: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i], i);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  const lanes = Array.from({ length: Math.max(1, Math.min(width, items.length)) }, lane);
  const settled = await Promise.allSettled(lanes);
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  return results;
}
