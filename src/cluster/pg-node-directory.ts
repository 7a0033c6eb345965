import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Pool } from 'pg';
import { redactUrl } from '../journal/pg.storage';
import { NodeLiveness } from './node-liveness';
import { NodeDirectory } from './node-directory.port';
import { ClusterReader, ClusterRecord, NODE_CREDENTIAL_PREFIX, NodePeers } from './node-peers.port';
import { SUPERVISOR_LEASE_NAME } from './supervisor-lease.port';

export interface PgNodeDirectoryOptions {
  self: string;
  leaseTtlS: number;
  /** Epoch milliseconds; injected so tests control time. */
  now?: () => number;
  /** The seq this node's journal has read, sent with each heartbeat (its lag); none when absent. */
  seq?: () => number;
  /** Hears a heartbeat or a read that failed (the next one is tried all the same). */
  onError?: (e: Error) => void;
}

type PeerRow = { node_id: string; silent_ms: string; url: string | null; credential_digest: string | null; round_listeners: number };

const digestOf = (token: string): Buffer => createHash('sha256').update(token).digest();
const PEER_COLUMNS = 'node_id, floor(extract(epoch FROM (now() - heartbeat_at)) * 1000) AS silent_ms, url, credential_digest, round_listeners';
/** Credentials of no node known look the nodes up again, at most this often: made-up ones cost at most so many reads. */
const LOOKUP_EVERY_MS = 100;

/**
 * The nodes sharing a PostgreSQL journal, in its table brainstem_nodes (migrations 2 and 4): this node upserts its row
 * at start and heartbeats it every lease_ttl_s/3 (with its URL, its credential's digest and its journal's seq), and
 * reads the others' as often, so isUp() and urlOf() answer from memory, synchronously. The heartbeat and its read are
 * one statement, on the database's clock. A clean stop marks the row stopped.
 */
export class PgNodeDirectory implements NodeDirectory, NodePeers, ClusterReader {
  private readonly pool: Pool;
  private readonly liveness: NodeLiveness;
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> = Promise.resolve();
  /** Made at start, kept in memory only: the database holds its digest. */
  private readonly token = NODE_CREDENTIAL_PREFIX + randomBytes(32).toString('base64url');
  private url: string | null = null;
  private peers = new Map<string, { url: string | null; digest: Buffer | null; round_listeners: number }>();
  private lastLookup = 0;
  private lookup: Promise<void> | null = null;
  private roundListeners: () => number = () => 0;

  constructor(
    private readonly dbUrl: string,
    private readonly options: PgNodeDirectoryOptions,
  ) {
    this.pool = new Pool({ connectionString: dbUrl, max: 1 });
    this.pool.on('error', () => undefined);
    this.liveness = new NodeLiveness(options.self, options.leaseTtlS * 1000, options.now ?? Date.now);
  }

  get self(): string {
    return this.options.self;
  }

  isUp(node: string): boolean {
    return this.liveness.isUp(node);
  }

  nodes(): Array<{ node: string; up: boolean }> {
    return this.liveness.nodes();
  }

  reportRoundListeners(count: () => number): void {
    this.roundListeners = count;
  }

  roundFollowers(): ReadonlyMap<string, number> {
    return new Map([...this.peers].filter(([node]) => this.isUp(node)).map(([node, p]) => [node, p.round_listeners]));
  }

  urlOf(node: string): string | null {
    return this.peers.get(node)?.url ?? null;
  }

  credential(): string {
    return this.token;
  }

  /**
   * The node whose stored digest matches. A credential of no node known (one that started since the last read) waits
   * for the next lookup, which the misses share.
   */
  async authenticate(token: string): Promise<string | null> {
    if (!token.startsWith(NODE_CREDENTIAL_PREFIX)) return null;
    const digest = digestOf(token);
    const find = () => [...this.peers].find(([, p]) => p.digest !== null && p.digest.length === digest.length && timingSafeEqual(p.digest, digest))?.[0] ?? null;
    const found = find();
    if (found !== null) return found;
    await this.lookUpAgain();
    return find();
  }

  private lookUpAgain(): Promise<void> {
    this.lookup ??= (async () => {
      const wait = this.lastLookup + LOOKUP_EVERY_MS - this.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait).unref());
      await this.refresh().catch((e: Error) => this.options.onError?.(e));
    })().finally(() => (this.lookup = null));
    return this.lookup;
  }

  /** Sent with the next heartbeat, which runs now so the others learn it without waiting a period. */
  advertise(url: string): void {
    this.url = url;
    if (this.timer) this.beating = this.beating.then(() => this.beat(false)).catch((e: Error) => this.options.onError?.(e));
  }

  /** Records this node's start (the journal's migrations created the table), then heartbeats until stop(). */
  async start(): Promise<void> {
    try {
      await this.beat(true);
    } catch (e) {
      await this.pool.end();
      throw new Error(`cannot register node ${this.self} in ${redactUrl(this.dbUrl)}: ${(e as Error).message}`);
    }
    const every = Math.max(100, Math.floor((this.options.leaseTtlS * 1000) / 3));
    this.timer = setInterval(() => {
      this.beating = this.beat(false).catch((e: Error) => this.options.onError?.(e));
    }, every);
    this.timer.unref();
  }

  /** Called by Nest as the application shuts down. */
  onApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  /**
   * Stops the heartbeats and marks the row stopped (a node of a newer release may then migrate the journal at once); its
   * credential is dropped, and the others refuse it from their next read.
   */
  async stop(): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    await this.beating;
    await this.pool.query('UPDATE brainstem_nodes SET stopped_at = now(), credential_digest = NULL WHERE node_id = $1', [this.self]).catch((e: Error) => this.options.onError?.(e));
    await this.pool.end();
  }

  /** Reads every other node's silence now: a node that joined since the last read is known before it is judged down. */
  async refresh(): Promise<void> {
    this.lastLookup = this.now();
    const { rows } = await this.pool.query<PeerRow>(
      `SELECT ${PEER_COLUMNS} FROM brainstem_nodes WHERE node_id <> $1`,
      [this.self],
    );
    this.heard(rows);
  }

  async read(): Promise<ClusterRecord> {
    const [nodes, rest] = await Promise.all([
      this.pool.query<{ node_id: string; url: string | null; started_at: Date; silent_ms: string; stopped: boolean; seq: string | null; head_seq: string | null }>(
        `SELECT node_id, url, started_at, floor(extract(epoch FROM (now() - heartbeat_at)) * 1000) AS silent_ms,
                stopped_at IS NOT NULL AS stopped, seq, head_seq
           FROM brainstem_nodes ORDER BY node_id`,
      ),
      this.pool.query<{ head: string; holder: string | null; term: string | null; remaining_ms: string | null }>(
        `SELECT h.seq AS head, l.holder, l.term, floor(extract(epoch FROM (l.expires_at - clock_timestamp())) * 1000) AS remaining_ms
           FROM brainstem_head h LEFT JOIN brainstem_leases l ON l.name = $1 AND l.term > 0`,
        [SUPERVISOR_LEASE_NAME],
      ),
    ]);
    const lease = rest.rows[0];
    const count = (v: string | null) => (v === null ? null : Number(v));
    return {
      head_seq: Number(lease?.head ?? 0),
      nodes: nodes.rows.map((r) => ({
        node: r.node_id,
        url: r.url,
        started_at: r.started_at.toISOString(),
        silent_ms: Number(r.silent_ms),
        stopped: r.stopped,
        seq: count(r.seq),
        head_seq: count(r.head_seq),
      })),
      lease: lease?.holder ? { holder: lease.holder, term: Number(lease.term), remaining_ms: Number(lease.remaining_ms) } : null,
    };
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private heard(rows: PeerRow[]): void {
    this.liveness.heard(rows.map((r) => ({ node: r.node_id, silentMs: Number(r.silent_ms) })));
    this.peers = new Map(
      rows.map((r) => [r.node_id, { url: r.url, digest: r.credential_digest === null ? null : Buffer.from(r.credential_digest, 'hex'), round_listeners: r.round_listeners }]),
    );
  }

  private async beat(starting: boolean): Promise<void> {
    const { rows } = await this.pool.query<PeerRow>(
      `WITH beat AS (
         INSERT INTO brainstem_nodes (node_id, started_at, heartbeat_at, url, credential_digest, seq, head_seq, round_listeners)
         VALUES ($1, now(), now(), $2, $3, $4, (SELECT seq FROM brainstem_head), $5)
         ON CONFLICT (node_id) DO UPDATE SET heartbeat_at = now(), url = EXCLUDED.url, credential_digest = EXCLUDED.credential_digest,
           seq = EXCLUDED.seq, head_seq = EXCLUDED.head_seq, round_listeners = EXCLUDED.round_listeners, stopped_at = NULL${starting ? ', started_at = now()' : ''}
       )
       SELECT ${PEER_COLUMNS} FROM brainstem_nodes WHERE node_id <> $1`,
      [this.self, this.url, digestOf(this.token).toString('hex'), this.options.seq?.() ?? null, this.roundListeners()],
    );
    this.heard(rows);
  }
}
