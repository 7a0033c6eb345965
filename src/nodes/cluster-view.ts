import { ClusterRecord } from '../cluster/node-peers.port';

/** A node as the cluster view shows it. */
export interface NodeView {
  id: string;
  /** The node that answered. */
  self: boolean;
  /** up: heard from within the lease time; stopped: stopped cleanly; down: silent past the lease time. */
  state: 'up' | 'stopped' | 'down';
  url: string | null;
  started_at: string | null;
  /** Milliseconds since its last heartbeat; null for a node the database has no row of. */
  heard_ms_ago: number | null;
  /** Whether it holds the supervisor lease now. */
  leader: boolean;
  /** The seq its journal had read, and how many events that was behind the database's head: at its last heartbeat, or now for this node. */
  seq: number | null;
  lag: number | null;
  /** The sessions it owns that this node holds in memory: all of them, and those whose worker runs. */
  sessions: { total: number; live: number };
}

export interface ClusterView {
  self: string;
  /** Whether other nodes may share the journal (PostgreSQL); false for the embedded one. */
  shared: boolean;
  head_seq: number;
  /** The supervisor lease: who holds it, in which term, and for how long still (null: for ever; expired when negative). */
  lease: { holder: string; term: number; expires_in_ms: number | null; expired: boolean } | null;
  nodes: NodeView[];
}

export interface ClusterFacts {
  self: string;
  shared: boolean;
  leaseTtlMs: number;
  record: ClusterRecord;
  /** The seq this node's journal has read now. */
  ownSeq: number;
  /** Each session this node holds: its owner (absent: this node) and whether its worker runs. */
  sessions: ReadonlyArray<{ node?: string; active: boolean }>;
}

/**
 * The nodes sharing the journal, the supervisor lease and each node's sessions and lag, from what the database says
 * and the sessions this node follows. A node that owns sessions but has no row in the database (sessions from before
 * nodes were recorded) is listed down. Pure.
 */
export function clusterView(facts: ClusterFacts): ClusterView {
  const { record, self } = facts;
  const counts = new Map<string, { total: number; live: number }>();
  for (const s of facts.sessions) {
    const c = counts.get(s.node ?? self) ?? { total: 0, live: 0 };
    counts.set(s.node ?? self, { total: c.total + 1, live: c.live + (s.active ? 1 : 0) });
  }
  const lease = record.lease;
  const leading = lease !== null && (lease.remaining_ms === null || lease.remaining_ms > 0) ? lease.holder : null;
  const rows = new Map(record.nodes.map((n) => [n.node, n]));
  const ids = [...new Set([self, ...rows.keys(), ...counts.keys()])].sort();
  const nodes = ids.map((id): NodeView => {
    const row = rows.get(id);
    const isSelf = id === self;
    const state = isSelf ? 'up' : !row ? 'down' : row.stopped ? 'stopped' : row.silent_ms < facts.leaseTtlMs ? 'up' : 'down';
    const seq = isSelf ? facts.ownSeq : (row?.seq ?? null);
    const head = isSelf ? record.head_seq : (row?.head_seq ?? null);
    return {
      id,
      self: isSelf,
      state,
      url: row?.url ?? null,
      started_at: row?.started_at ?? null,
      heard_ms_ago: isSelf ? 0 : (row?.silent_ms ?? null),
      leader: leading === id,
      seq,
      lag: seq === null || head === null ? null : Math.max(0, head - seq),
      sessions: counts.get(id) ?? { total: 0, live: 0 },
    };
  });
  return {
    self,
    shared: facts.shared,
    head_seq: record.head_seq,
    lease: lease && { holder: lease.holder, term: lease.term, expires_in_ms: lease.remaining_ms, expired: lease.remaining_ms !== null && lease.remaining_ms <= 0 },
    nodes,
  };
}
