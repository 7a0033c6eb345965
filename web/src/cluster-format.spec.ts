import { heardText, lagText, leaseText } from './cluster-format';
import type { ClusterView, NodeView } from './types';

const view = (lease: ClusterView['lease']): ClusterView => ({ self: 'a', shared: true, head_seq: 10, lease, nodes: [] });
const node = (over: Partial<NodeView>): NodeView => ({
  id: 'b',
  self: false,
  state: 'up',
  url: null,
  started_at: null,
  heard_ms_ago: 1250,
  leader: false,
  seq: 10,
  lag: 0,
  sessions: { total: 0, live: 0 },
  ...over,
});

describe('the cluster view texts', () => {
  it('Given a lease running, run out, held for good or never held, Then each says who holds it, in which term and for how long', () => {
    expect(leaseText(view({ holder: 'b', term: 3, expires_in_ms: 4200, expired: false }))).toBe('Held by node b in term 3, for 4.2 s more unless renewed.');
    expect(leaseText(view({ holder: 'b', term: 3, expires_in_ms: -1500, expired: true }))).toBe(
      'Expired 1.5 s ago: node b held it last, in term 3. The next node to claim it takes term 4.',
    );
    expect(leaseText(view({ holder: 'a', term: 1, expires_in_ms: null, expired: false }))).toBe('Held by node a for good (term 1): it is alone on its journal.');
    expect(leaseText(view(null))).toBe('No node has held the supervisor lease yet.');
  });

  it('Given nodes heard at various times and behind by various counts, Then the texts say so', () => {
    expect(heardText(node({}))).toBe('1.3 s ago');
    expect(heardText(node({ self: true }))).toBe('now (this node)');
    expect(heardText(node({ heard_ms_ago: null }))).toBe('never');
    expect([0, 1, 1200, null].map((lag) => lagText(node({ lag })))).toEqual(['caught up', '1 event behind', '1,200 events behind', 'unknown']);
  });
});
