/**
 * How this node reaches the other nodes sharing its journal, and knows them when they call: each advertises the base
 * URL it is reached at, and the digest of a credential it makes at start (the credential itself never leaves its
 * memory). A call between nodes carries that credential; the node called finds the caller by its digest.
 */
export interface NodePeers {
  /** The base URL a node advertised; null when it is not known or advertised none. */
  urlOf(node: string): string | null;
  /** This node's credential for its calls to the others (a bearer token); null alone on its journal. */
  credential(): string | null;
  /** The node a presented credential proves, or null. */
  authenticate(token: string): Promise<string | null>;
  /** Where the other nodes reach this one, once it listens. */
  advertise(url: string): void;
}

export const NODE_PEERS = Symbol('NODE_PEERS');

/** What a node credential starts with, so the authentication hook knows where to check it. */
export const NODE_CREDENTIAL_PREFIX = 'bsn_';

/** A node alone on its journal: no other node to call, none that calls. */
export const noPeers: NodePeers = {
  urlOf: () => null,
  credential: () => null,
  authenticate: () => Promise.resolve(null),
  advertise: () => undefined,
};

/** One node as the journal's database knows it (its row of brainstem_nodes). */
export interface NodeRecord {
  node: string;
  url: string | null;
  started_at: string;
  /** Milliseconds since its last heartbeat, by the database's clock. */
  silent_ms: number;
  /** Whether it stopped cleanly after that heartbeat. */
  stopped: boolean;
  /** The seq its journal had read at its last heartbeat, and the database's head then; null before either was sent. */
  seq: number | null;
  head_seq: number | null;
}

/** The nodes sharing the journal and the supervisor lease, as the database says now. */
export interface ClusterRecord {
  /** The database's head seq. */
  head_seq: number;
  nodes: NodeRecord[];
  /** The supervisor lease's row: its holder, term and the milliseconds it still runs (negative: expired; null: for ever). */
  lease: { holder: string; term: number; remaining_ms: number | null } | null;
}

/** Reads the nodes and the lease as stored. */
export interface ClusterReader {
  read(): Promise<ClusterRecord>;
}

export const CLUSTER_READER = Symbol('CLUSTER_READER');

/** The record of a node alone on its journal: itself, never behind, holding the lease for ever (term 1). */
export function soleCluster(self: string, startedAt: Date, seq: () => number): ClusterReader {
  return {
    read: () => {
      const head = seq();
      const node = { node: self, url: null, started_at: startedAt.toISOString(), silent_ms: 0, stopped: false, seq: head, head_seq: head };
      return Promise.resolve({ head_seq: head, nodes: [node], lease: { holder: self, term: 1, remaining_ms: null } });
    },
  };
}
