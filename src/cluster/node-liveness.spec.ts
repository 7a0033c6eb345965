import { NodeLiveness } from './node-liveness';

describe('NodeLiveness', () => {
  let now = 1_000_000;
  const clock = () => now;

  it('given a node heard 1 s ago with a 6 s lease, when 4 s pass, then it is up; when 2 more pass, then it is down', () => {
    const nodes = new NodeLiveness('a', 6000, clock);
    nodes.heard([{ node: 'b', silentMs: 1000 }]);
    now += 4000;
    expect(nodes.isUp('b')).toBe(true);
    now += 1000;
    expect(nodes.isUp('b')).toBe(false);
  });

  it('given no read naming a node, then it is down; this node itself is always up', () => {
    const nodes = new NodeLiveness('a', 6000, clock);
    expect(nodes.isUp('c')).toBe(false);
    expect(nodes.isUp('a')).toBe(true);
    nodes.heard([{ node: 'a', silentMs: 60_000 }]);
    expect(nodes.isUp('a')).toBe(true);
  });

  it('given a node silent past the lease in one read and heard again in the next, then it is up again', () => {
    const nodes = new NodeLiveness('a', 6000, clock);
    nodes.heard([{ node: 'b', silentMs: 7000 }]);
    expect(nodes.isUp('b')).toBe(false);
    nodes.heard([{ node: 'b', silentMs: 10 }]);
    expect(nodes.isUp('b')).toBe(true);
    expect(nodes.nodes()).toEqual([
      { node: 'a', up: true },
      { node: 'b', up: true },
    ]);
  });
});
