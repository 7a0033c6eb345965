import { ClusterRecord, NodeRecord } from '../cluster/node-peers.port';
import { clusterView } from './cluster-view';

const row = (node: string, over: Partial<NodeRecord> = {}): NodeRecord => ({
  node,
  url: `http://127.0.0.1:${4820 + node.charCodeAt(0)}`,
  started_at: '2026-11-26T10:00:00.000Z',
  silent_ms: 500,
  stopped: false,
  seq: 90,
  head_seq: 100,
  ...over,
});
const record = (nodes: NodeRecord[], lease: ClusterRecord['lease'] = { holder: 'b', term: 3, remaining_ms: 4000 }): ClusterRecord => ({ head_seq: 120, nodes, lease });

describe('clusterView', () => {
  it('Given three nodes, one silent past the lease and one stopped, Then each has its state, and only the holder of a running lease leads', () => {
    const view = clusterView({ self: 'a', shared: true, leaseTtlMs: 6000, record: record([row('a'), row('b'), row('c', { silent_ms: 9000 }), row('d', { stopped: true })]), ownSeq: 118, sessions: [] });
    expect(view.nodes.map((n) => [n.id, n.state, n.leader])).toEqual([
      ['a', 'up', false],
      ['b', 'up', true],
      ['c', 'down', false],
      ['d', 'stopped', false],
    ]);
    expect(view.lease).toEqual({ holder: 'b', term: 3, expires_in_ms: 4000, expired: false });
  });

  it("Given the lease run out, Then no node leads and the lease shows expired, naming its last holder and term", () => {
    const view = clusterView({ self: 'a', shared: true, leaseTtlMs: 6000, record: record([row('a'), row('b')], { holder: 'b', term: 3, remaining_ms: -10 }), ownSeq: 120, sessions: [] });
    expect(view.nodes.some((n) => n.leader)).toBe(false);
    expect(view.lease).toEqual({ holder: 'b', term: 3, expires_in_ms: -10, expired: true });
  });

  it("Given heartbeats with seqs, Then another node's lag is its head minus its seq at its beat, and this node's is the head now minus its own seq", () => {
    const view = clusterView({ self: 'a', shared: true, leaseTtlMs: 6000, record: record([row('a', { seq: 1, head_seq: 1 }), row('b', { seq: 95, head_seq: 100 }), row('c', { seq: null, head_seq: null })]), ownSeq: 117, sessions: [] });
    expect(view.nodes.map((n) => [n.id, n.seq, n.lag])).toEqual([
      ['a', 117, 3],
      ['b', 95, 5],
      ['c', null, null],
    ]);
  });

  it('Given sessions of several owners, Then each node counts its own, all and live; an owner with no row is listed down', () => {
    const sessions = [{ active: true }, { node: 'a', active: false }, { node: 'b', active: true }, { node: 'b', active: true }, { node: 'old', active: false }];
    const view = clusterView({ self: 'a', shared: true, leaseTtlMs: 6000, record: record([row('a'), row('b')]), ownSeq: 120, sessions });
    expect(view.nodes.map((n) => [n.id, n.state, n.sessions])).toEqual([
      ['a', 'up', { total: 2, live: 1 }],
      ['b', 'up', { total: 2, live: 2 }],
      ['old', 'down', { total: 1, live: 0 }],
    ]);
    expect(view.nodes.find((n) => n.id === 'old')).toMatchObject({ url: null, started_at: null, heard_ms_ago: null, seq: null, lag: null });
  });
});
