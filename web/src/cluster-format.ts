import type { ClusterView, NodeView } from './types';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Who holds the supervisor lease, in which term, and for how long still. */
export function leaseText(view: ClusterView): string {
  const lease = view.lease;
  if (lease === null) return 'No node has held the supervisor lease yet.';
  if (lease.expires_in_ms === null) return `Held by node ${lease.holder} for good (term ${lease.term}): it is alone on its journal.`;
  if (lease.expired) return `Expired ${seconds(-lease.expires_in_ms)} ago: node ${lease.holder} held it last, in term ${lease.term}. The next node to claim it takes term ${lease.term + 1}.`;
  return `Held by node ${lease.holder} in term ${lease.term}, for ${seconds(lease.expires_in_ms)} more unless renewed.`;
}

/** When a node was last heard from. */
export function heardText(node: NodeView): string {
  if (node.self) return 'now (this node)';
  return node.heard_ms_ago === null ? 'never' : `${seconds(node.heard_ms_ago)} ago`;
}

/** How far behind the database's head a node's journal was. */
export function lagText(node: NodeView): string {
  if (node.lag === null) return 'unknown';
  if (node.lag === 0) return 'caught up';
  return `${node.lag.toLocaleString('en-US')} ${node.lag === 1 ? 'event' : 'events'} behind`;
}
