import { Pool } from 'pg';
import { redactUrl } from '../journal/pg.storage';
import { NodeLiveness } from './node-liveness';
import { NodeDirectory } from './node-directory.port';

export interface PgNodeDirectoryOptions {
  self: string;
  leaseTtlS: number;
  /** Epoch milliseconds; injected so tests control time. */
  now?: () => number;
  /** Hears a heartbeat or a read that failed (the next one is tried all the same). */
  onError?: (e: Error) => void;
}

/**
 * The nodes sharing a PostgreSQL journal, in its table brainstem_nodes (migration 2): this node upserts its row at
 * start and heartbeats it every lease_ttl_s/3, and reads every node's silence as often, so isUp() answers from
 * memory, synchronously. The heartbeat and its read are one statement, on the database's clock.
 */
export class PgNodeDirectory implements NodeDirectory {
  private readonly pool: Pool;
  private readonly liveness: NodeLiveness;
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> = Promise.resolve();

  constructor(
    private readonly url: string,
    private readonly options: PgNodeDirectoryOptions,
  ) {
    this.pool = new Pool({ connectionString: url, max: 1 });
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

  /** Records this node's start (the journal's migrations created the table), then heartbeats until stop(). */
  async start(): Promise<void> {
    try {
      await this.beat(true);
    } catch (e) {
      await this.pool.end();
      throw new Error(`cannot register node ${this.self} in ${redactUrl(this.url)}: ${(e as Error).message}`);
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

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beating;
    await this.pool.end();
  }

  /** Reads every other node's silence now: a node that joined since the last read is known before it is judged down. */
  async refresh(): Promise<void> {
    const { rows } = await this.pool.query<{ node_id: string; silent_ms: string }>(
      'SELECT node_id, floor(extract(epoch FROM (now() - heartbeat_at)) * 1000) AS silent_ms FROM brainstem_nodes WHERE node_id <> $1',
      [this.self],
    );
    this.liveness.heard(rows.map((r) => ({ node: r.node_id, silentMs: Number(r.silent_ms) })));
  }

  private async beat(starting: boolean): Promise<void> {
    const { rows } = await this.pool.query<{ node_id: string; silent_ms: string }>(
      `WITH beat AS (
         INSERT INTO brainstem_nodes (node_id, started_at, heartbeat_at) VALUES ($1, now(), now())
         ON CONFLICT (node_id) DO UPDATE SET heartbeat_at = now()${starting ? ', started_at = now()' : ''}
       )
       SELECT node_id, floor(extract(epoch FROM (now() - heartbeat_at)) * 1000) AS silent_ms FROM brainstem_nodes WHERE node_id <> $1`,
      [this.self],
    );
    this.liveness.heard(rows.map((r) => ({ node: r.node_id, silentMs: Number(r.silent_ms) })));
  }
}
