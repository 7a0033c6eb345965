import { RetentionQueue, pastRetention } from './retention-queue';

const H = 3600_000;

describe('retention deadlines', () => {
  it('given items that ended, when time passes, then each is due exactly retention after its end, oldest first', () => {
    const q = new RetentionQueue(24 * H);
    q.add('a', 1 * H);
    q.add('b', 2 * H);
    expect(q.nextDue()).toBe(25 * H);
    expect(q.takeDue(25 * H - 1)).toEqual([]);
    expect(q.takeDue(25 * H)).toEqual(['a']);
    expect(q.nextDue()).toBe(26 * H);
    expect(q.takeDue(100 * H)).toEqual(['b']);
    expect(q.nextDue()).toBeNull();
    expect(q.size).toBe(0);
  });

  it('given a restarted clock, then the item moves behind the others and is due retention after the restart', () => {
    const q = new RetentionQueue(10);
    q.add('held', 0);
    q.add('other', 5);
    q.add('held', 12);
    expect(q.entries()).toEqual([
      ['other', 5],
      ['held', 12],
    ]);
    expect(q.takeDue(15)).toEqual(['other']);
    expect(q.clockOf('held')).toBe(12);
    expect(q.takeDue(22)).toEqual(['held']);
  });

  it('given an item deleted before it is due, then it is never due', () => {
    const q = new RetentionQueue(10);
    q.add('a', 0);
    q.delete('a');
    expect(q.takeDue(1000)).toEqual([]);
    expect(q.nextDue()).toBeNull();
  });

  it('given no retention (Infinity), then nothing is ever due', () => {
    const q = new RetentionQueue(Infinity);
    q.add('a', 0);
    expect(q.takeDue(Number.MAX_SAFE_INTEGER)).toEqual([]);
    expect(q.nextDue()).toBe(Infinity);
  });

  it('says whether a clock start is past retention at a time, the boundary included', () => {
    expect(pastRetention(100, 50, 149)).toBe(false);
    expect(pastRetention(100, 50, 150)).toBe(true);
    expect(pastRetention(100, Infinity, Number.MAX_SAFE_INTEGER)).toBe(false);
  });
});
