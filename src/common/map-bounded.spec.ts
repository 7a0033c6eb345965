import { mapBounded } from './map-bounded';

/** A call that stays open until the test releases it. */
function gate() {
  const started: number[] = [];
  const release = new Map<number, { ok: () => void; fail: (e: Error) => void }>();
  const fn = (item: number) =>
    new Promise<string>((resolve, reject) => {
      started.push(item);
      release.set(item, { ok: () => resolve(`r${item}`), fail: reject });
    });
  return { started, release, fn };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('mapBounded', () => {
  it('Given more items than lanes, Then at most width calls are in flight and results keep item order', async () => {
    const g = gate();
    const all = mapBounded([1, 2, 3, 4, 5], 2, g.fn);
    await settle();
    expect(g.started).toEqual([1, 2]);
    // When the second finishes first, Then the third starts in its lane
    g.release.get(2)!.ok();
    await settle();
    expect(g.started).toEqual([1, 2, 3]);
    g.release.get(1)!.ok();
    await settle();
    expect(g.started).toEqual([1, 2, 3, 4]);
    for (const i of [4, 3]) g.release.get(i)!.ok();
    await settle();
    expect(g.started).toEqual([1, 2, 3, 4, 5]);
    g.release.get(5)!.ok();
    await expect(all).resolves.toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
  });

  it('Given a failing call, Then no new call starts and the failure rejects after the calls in flight settle', async () => {
    const g = gate();
    let done = false;
    const all = mapBounded([1, 2, 3, 4], 2, g.fn).finally(() => (done = true));
    await settle();
    g.release.get(1)!.fail(new Error('boom'));
    await settle();
    expect(g.started).toEqual([1, 2]);
    expect(done).toBe(false);
    g.release.get(2)!.ok();
    await expect(all).rejects.toThrow('boom');
    expect(g.started).toEqual([1, 2]);
  });

  it('Given no items, Then it answers an empty list without calling', async () => {
    const fn = jest.fn();
    await expect(mapBounded([], 8, fn)).resolves.toEqual([]);
    expect(fn).not.toHaveBeenCalled();
  });
});
