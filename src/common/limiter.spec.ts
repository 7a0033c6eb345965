import { Limiter } from './limiter';

describe('Limiter', () => {
  it('given more jobs than its width, then at most that many run at once, in call order, and a failure frees its place', async () => {
    const limiter = new Limiter(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const gates: Array<() => void> = [];
    const job = (i: number, fail = false) =>
      limiter.run(async () => {
        running++;
        most = Math.max(most, running);
        order.push(i);
        await new Promise<void>((r) => gates.push(r));
        running--;
        if (fail) throw new Error(`job ${i}`);
        return i;
      });
    const jobs = [job(0, true), job(1), job(2), job(3)];
    const settle = async () => {
      for (let i = 0; i < 10; i++) await Promise.resolve();
    };
    await settle();
    expect(order).toEqual([0, 1]);
    gates.shift()?.();
    await settle();
    expect(order).toEqual([0, 1, 2]);
    while (gates.length) {
      gates.shift()?.();
      await settle();
    }
    const results = await Promise.allSettled(jobs);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['job 0', 1, 2, 3]);
    expect(most).toBe(2);
  });
});
