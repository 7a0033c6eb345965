import { Client, Pool, PoolClient, QueryArrayConfig, QueryArrayResult, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { JournalCorruptError, JournalError, JournalHead } from './journal.port';
import { Checkpoint, CommitBatch, Fenced, HEAD_MOVED, HeadMoved, SharedJournalStorage } from './journal.storage';
import { JOURNAL_CHANNEL, MIGRATION_LOCK, MIGRATIONS, SCHEMA_VERSION } from './pg.migrations';

export interface PgStorageOptions {
  /** false: refuse a database that holds no journal instead of creating one (the CLI inspects, it never creates). */
  create?: boolean;
  /** Connections in the pool. */
  poolSize?: number;
  /**
   * The node opening the journal, with its lease time: it migrates a journal of an older schema only when no other
   * node has been heard from within that time, and is refused otherwise (it would change the schema under them).
   * Without it (a spec opening journals itself), an older schema is migrated as found.
   */
  node?: { id: string; leaseTtlS: number };
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@?#]*:)[^@/?#]*@/i, '$1***@');
}

type Row = Record<string, string | number | null>;

/** The version of each stream named ($1, text[]): one max per stream, each an index lookup (a GROUP BY over the streams would read all their rows). */
const STREAM_VERSIONS = {
  name: 'brainstem_stream_versions',
  text: 'SELECT s AS stream, (SELECT max(version) FROM brainstem_events WHERE stream = s) AS version FROM unnest($1::text[]) AS s',
};

/**
 * Whether an error is the database going or gone: a server error of the connection-exception class (08…) or a
 * shutdown (57P01 admin, 57P02 crash, 57P03 cannot connect now), or the client's socket failing (EPIPE, ECONNREFUSED,
 * "Connection terminated unexpectedly").
 */
function isUnavailable(e: Error): boolean {
  const code = (e as { code?: unknown }).code;
  if ('severity' in e) return typeof code === 'string' && (code.startsWith('08') || ['57P01', '57P02', '57P03'].includes(code));
  return 'syscall' in e || /connection terminated|timeout exceeded when trying to connect|client has encountered a connection error/i.test(e.message);
}

/** A failure of the database connection as a journal error naming the database (a 503 to clients); others as they are. */
function asJournalError(location: string, e: unknown): unknown {
  // Not instanceof Error: a socket's error is made by Node's core, of another realm than a sandboxed caller's.
  const failed = typeof e === 'object' && e !== null && typeof (e as Error).message === 'string';
  if (!failed || e instanceof JournalError || !isUnavailable(e as Error)) return e;
  return new JournalError('journal_unavailable', `journal database ${location} unavailable: ${(e as Error).message}`);
}

/**
 * The journal on PostgreSQL: one row per event, the head (with the checkpoint) in a one-row table that every commit
 * locks. Several journals may write to one database: a commit applies only if the stored head is still the one its
 * batch was chained on, and answers HEAD_MOVED otherwise, so seq and chain are assigned against the database.
 */
export class PgStorage implements SharedJournalStorage {
  readonly shared = true;
  readonly location: string;
  /** Every commit is a transaction whose WAL the server flushes. */
  readonly syncedCommits = true;
  private pool: Pool | null = null;
  private listener: Client | null = null;
  private listening = false;
  private relistenTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly options: PgStorageOptions = {},
  ) {
    this.location = redactUrl(url);
  }

  private get db(): Pool {
    if (!this.pool) throw new Error(`journal database ${this.location} is not open`);
    return this.pool;
  }

  async open(): Promise<void> {
    const pool = new Pool({ connectionString: this.url, max: this.options.poolSize ?? 10 });
    // An idle connection that drops is discarded by the pool; the next query reconnects or fails with the cause.
    pool.on('error', () => undefined);
    this.pool = pool;
    try {
      const client = await pool.connect().catch((e: Error) => {
        throw new Error(`cannot reach the journal database ${this.location}: ${e.message}`);
      });
      client.release();
      await this.transaction((c) => this.migrate(c));
    } catch (e) {
      this.pool = null;
      await pool.end();
      throw e;
    }
  }

  /**
   * Applies the migrations this database lacks, under an advisory lock held to the end of the transaction. A node runs
   * on its own schema version only: a newer database is refused (a newer release migrated it), and so is an older one
   * while nodes of the older release run on it. A tool that only reads (create: false) reads an older one as it is.
   */
  private async migrate(client: PoolClient): Promise<void> {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    const { rows } = await client.query<{ present: boolean }>(`SELECT to_regclass('brainstem_migrations') IS NOT NULL AS present`);
    if (!rows[0].present) {
      if (this.options.create === false) throw new Error(`no journal at ${this.location}`);
      await client.query('CREATE TABLE brainstem_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
    }
    const applied = new Set((await client.query<{ version: number }>('SELECT version FROM brainstem_migrations')).rows.map((r) => r.version));
    const found = Math.max(0, ...applied);
    if (found > SCHEMA_VERSION) {
      throw new JournalError(
        'journal_schema_mismatch',
        `the journal database ${this.location} has schema version ${found}, newer than this Brainstem's (${SCHEMA_VERSION}): a newer release migrated it, so this one cannot run on it; run that release or a later one (docs/operations/backup-and-upgrades.md)`,
      );
    }
    if (found === SCHEMA_VERSION || (found > 0 && this.options.create === false)) return;
    if (found > 0 && this.options.node) await this.refuseUnderRunningNodes(client, found, this.options.node);
    for (const m of MIGRATIONS) {
      if (applied.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO brainstem_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
    }
  }

  /** Refuses to migrate a journal of schema version `found` while another node was heard from within the lease time. */
  private async refuseUnderRunningNodes(client: PoolClient, found: number, node: { id: string; leaseTtlS: number }): Promise<void> {
    // The table of nodes came with version 2, the mark of a clean stop with version 4.
    if (found < 2) return;
    const stopped = found >= 4 ? ' AND stopped_at IS NULL' : '';
    const { rows } = await client.query<{ node_id: string }>(
      `SELECT node_id FROM brainstem_nodes WHERE node_id <> $1 AND heartbeat_at > now() - make_interval(secs => $2)${stopped} ORDER BY node_id`,
      [node.id, node.leaseTtlS],
    );
    if (rows.length === 0) return;
    const names = rows.map((r) => r.node_id).join(', ');
    throw new JournalError(
      'journal_schema_mismatch',
      `the journal database ${this.location} has schema version ${found}, older than this Brainstem's (${SCHEMA_VERSION}), and ${rows.length === 1 ? 'node' : 'nodes'} ${names} of the older release ${rows.length === 1 ? 'runs' : 'run'} on it (heard from within ${node.leaseTtlS} s): a node runs only on its own schema version. Stop every node of the older release, then start this one: it migrates the journal (docs/operations/backup-and-upgrades.md)`,
    );
  }

  /** A query on the pool, its connection failures as journal_unavailable. */
  private async query<R extends QueryResultRow>(config: QueryConfig | string, values?: unknown[]): Promise<QueryResult<R>> {
    try {
      return await this.db.query<R>(config, values);
    } catch (e) {
      throw asJournalError(this.location, e);
    }
  }

  /** The same for a query answering rows as arrays. */
  private async queryArrays<R extends unknown[]>(config: QueryArrayConfig): Promise<QueryArrayResult<R>> {
    try {
      return await this.db.query<R>(config);
    } catch (e) {
      throw asJournalError(this.location, e);
    }
  }

  private async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.db.connect().catch((e: unknown) => {
      throw asJournalError(this.location, e);
    });
    let broken: Error | undefined;
    // A connection that fails while checked out also emits 'error', which unheard would throw out of the process; the
    // query under way rejects with it all the same.
    const heard = () => undefined;
    client.on('error', heard);
    try {
      await client.query('BEGIN');
      const out = await work(client);
      await client.query('COMMIT');
      return out;
    } catch (e) {
      await client.query('ROLLBACK').catch((err: Error) => (broken = err));
      throw asJournalError(this.location, e);
    } finally {
      client.off('error', heard);
      // A connection that could not even roll back is closed rather than handed to the next caller.
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    const listener = this.listener;
    const pool = this.pool;
    this.listener = null;
    this.pool = null;
    if (this.relistenTimer) clearTimeout(this.relistenTimer);
    this.relistenTimer = null;
    await listener?.end();
    await pool?.end();
  }

  async readMeta(): Promise<{ head: JournalHead | null; checkpoint: Checkpoint | null }> {
    const { rows } = await this.query<Row>('SELECT seq, hash, checkpoint_seq, checkpoint_hash FROM brainstem_head');
    const r = rows[0];
    if (!r) return { head: null, checkpoint: null };
    return {
      head: { seq: Number(r.seq), hash: String(r.hash) },
      checkpoint: r.checkpoint_seq === null ? null : { seq: Number(r.checkpoint_seq), hash: String(r.checkpoint_hash) },
    };
  }

  async readTip(): Promise<{ head: JournalHead | null; lastSeq: number }> {
    // One statement, one snapshot: a commit moves the head and adds its events together.
    const { rows } = await this.query<Row>({
      name: 'brainstem_tip',
      text: 'SELECT h.seq, h.hash, (SELECT coalesce(max(seq), 0) FROM brainstem_events) AS last FROM (SELECT 1) AS one LEFT JOIN brainstem_head h ON true',
    });
    const r = rows[0];
    return { head: r.seq === null ? null : { seq: Number(r.seq), hash: String(r.hash) }, lastSeq: Number(r.last) };
  }

  async lastSeq(): Promise<number> {
    const { rows } = await this.query<Row>('SELECT coalesce(max(seq), 0) AS last FROM brainstem_events');
    return Number(rows[0].last);
  }

  async streamVersion(stream: string): Promise<number> {
    const { rows } = await this.query<Row>({
      name: 'brainstem_stream_version',
      text: 'SELECT coalesce(max(version), 0) AS version FROM brainstem_events WHERE stream = $1',
      values: [stream],
    });
    return Number(rows[0].version);
  }

  async streamVersions(streams: readonly string[]): Promise<Map<string, number>> {
    const { rows } = await this.query<Row>({ ...STREAM_VERSIONS, values: [[...streams]] });
    return new Map(rows.map((r) => [String(r.stream), Number(r.version ?? 0)]));
  }

  commit(batch: CommitBatch): Promise<void | HeadMoved | Fenced> {
    const first = batch.events[0];
    return this.transaction(async (client) => {
      if (batch.fences?.length) {
        // Share-locked to the commit's end: a claim that would start a new term waits until these events are in.
        const { rows } = await client.query<Row>({
          name: 'brainstem_fences',
          text: 'SELECT name, holder, term FROM brainstem_leases WHERE name = ANY($1::text[]) FOR SHARE',
          values: [[...new Set(batch.fences.map((f) => f.lease))]],
        });
        const held = new Map(rows.map((r) => [String(r.name), r]));
        const fenced = batch.fences.filter((f) => {
          const r = held.get(f.lease);
          return !r || r.holder !== f.holder || Number(r.term) !== f.term;
        });
        if (fenced.length > 0) return { ok: false, reason: 'fenced', fenced } satisfies Fenced;
      }
      // The head row is the lock: a writer that commits meanwhile makes this update match no row once it waited.
      const moved = await client.query({
        name: 'brainstem_move_head',
        text:
          'UPDATE brainstem_head SET seq = $1, hash = $2, checkpoint_seq = coalesce($5, checkpoint_seq), checkpoint_hash = coalesce($6, checkpoint_hash) ' +
          'WHERE seq = $3 AND hash = $4',
        values: [batch.head.seq, batch.head.hash, first.seq - 1, first.prevHash, batch.checkpoint?.seq ?? null, batch.checkpoint?.hash ?? null],
      });
      if (moved.rowCount !== 1) return HEAD_MOVED;
      const expected = new Map<string, number>();
      for (const e of batch.events) if (!expected.has(e.stream)) expected.set(e.stream, e.version - 1);
      const { rows } = await client.query<Row>({ ...STREAM_VERSIONS, values: [[...expected.keys()]] });
      const stored = new Map(rows.map((r) => [String(r.stream), Number(r.version ?? 0)]));
      for (const [stream, version] of expected) {
        // The head did not move, so the journal knew every event: a differing version is a damaged store.
        if ((stored.get(stream) ?? 0) !== version) {
          throw new JournalCorruptError(first.seq, `stream ${stream} is at version ${stored.get(stream) ?? 0} in the database, its head says ${version}`);
        }
      }
      const cols = batch.events;
      await client.query({
        name: 'brainstem_insert_events',
        text:
          'INSERT INTO brainstem_events (seq, stream, version, hash, prev_hash, body) ' +
          'SELECT * FROM unnest($1::bigint[], $2::text[], $3::integer[], $4::text[], $5::text[], $6::text[])',
        values: [cols.map((e) => e.seq), cols.map((e) => e.stream), cols.map((e) => e.version), cols.map((e) => e.hash), cols.map((e) => e.prevHash), cols.map((e) => e.body)],
      });
      await client.query({ name: 'brainstem_notify', text: 'SELECT pg_notify($1, $2)', values: [JOURNAL_CHANNEL, String(batch.head.seq)] });
      return undefined;
    });
  }

  async *scanRecords(fromSeq: number, limit: number, pageSize: number): AsyncIterable<string[]> {
    for (let seq = Math.max(1, fromSeq), left = limit; left > 0; ) {
      const { rows } = await this.queryArrays<[string, string]>({
        name: 'brainstem_scan',
        text: 'SELECT seq, hash || prev_hash || body FROM brainstem_events WHERE seq >= $1 ORDER BY seq LIMIT $2',
        values: [seq, Math.min(pageSize, left)],
        rowMode: 'array',
      });
      if (rows.length === 0) return;
      yield rows.map((r) => r[1]);
      seq = Number(rows[rows.length - 1][0]) + 1;
      left -= rows.length;
    }
  }

  async readRecord(seq: number): Promise<string | undefined> {
    return (await this.readRecordsAt([seq]))[0];
  }

  async readRecordsAt(seqs: readonly number[]): Promise<Array<string | undefined>> {
    if (seqs.length === 0) return [];
    const { rows } = await this.queryArrays<[string, string]>({
      name: 'brainstem_read_at',
      text: 'SELECT seq, hash || prev_hash || body FROM brainstem_events WHERE seq = ANY($1::bigint[])',
      values: [seqs],
      rowMode: 'array',
    });
    const found = new Map(rows.map((r) => [Number(r[0]), r[1]]));
    return seqs.map((s) => found.get(s));
  }

  async streamSeqs(stream: string, fromVersion: number, limit: number): Promise<Array<{ version: number; seq: number }>> {
    const { rows } = await this.queryArrays<[number, string]>({
      name: 'brainstem_stream_seqs',
      text: 'SELECT version, seq FROM brainstem_events WHERE stream = $1 AND version >= $2 ORDER BY version LIMIT $3',
      values: [stream, fromVersion, limit],
      rowMode: 'array',
    });
    return rows.map((r) => ({ version: Number(r[0]), seq: Number(r[1]) }));
  }

  async putSnapshot(stream: string, text: string): Promise<void> {
    await this.query('INSERT INTO brainstem_snapshots (stream, body) VALUES ($1, $2) ON CONFLICT (stream) DO UPDATE SET body = EXCLUDED.body', [stream, text]);
  }

  async getSnapshot(stream: string): Promise<string | undefined> {
    const { rows } = await this.query<Row>('SELECT body FROM brainstem_snapshots WHERE stream = $1', [stream]);
    return rows[0] ? String(rows[0].body) : undefined;
  }

  /**
   * Calls onSeq with the head seq of every commit to this database, by any writer (this one included), on a
   * connection of its own that LISTENs; onError when that connection fails. A connection that drops is opened
   * again (after a delay growing to RELISTEN_MAX_MS), then onRelisten is called: notices sent meanwhile are lost,
   * so the caller catches up by seq. Ended by close().
   */
  async listen(onSeq: (seq: number) => void, onError: (e: Error) => void, onRelisten: () => void = () => undefined): Promise<void> {
    if (this.listening) throw new Error('already listening');
    this.listening = true;
    try {
      await this.connectListener(onSeq, onError, onRelisten);
    } catch (e) {
      this.listening = false;
      throw e;
    }
  }

  private async connectListener(onSeq: (seq: number) => void, onError: (e: Error) => void, onRelisten: () => void): Promise<void> {
    const client = new Client({ connectionString: this.url });
    let dropped = false;
    const drop = (e: Error) => {
      if (dropped) return;
      dropped = true;
      if (this.listener === client) this.listener = null;
      client.end().catch(() => undefined);
      if (!this.pool) return;
      onError(e);
      this.relisten(onSeq, onError, onRelisten, RELISTEN_FIRST_MS);
    };
    client.on('notification', (n) => {
      if (n.channel === JOURNAL_CHANNEL && n.payload) onSeq(Number(n.payload));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${JOURNAL_CHANNEL}`);
    } catch (e) {
      await client.end().catch(() => undefined);
      throw e;
    }
    if (!this.pool) {
      await client.end().catch(() => undefined);
      return;
    }
    client.on('error', drop);
    client.on('end', () => drop(new Error('the LISTEN connection ended')));
    this.listener = client;
  }

  private relisten(onSeq: (seq: number) => void, onError: (e: Error) => void, onRelisten: () => void, delayMs: number): void {
    this.relistenTimer = setTimeout(() => {
      this.relistenTimer = null;
      if (!this.pool) return;
      this.connectListener(onSeq, onError, onRelisten).then(
        () => {
          if (this.pool) onRelisten();
        },
        (e: Error) => {
          onError(e);
          if (this.pool) this.relisten(onSeq, onError, onRelisten, Math.min(delayMs * 2, RELISTEN_MAX_MS));
        },
      );
    }, delayMs);
    this.relistenTimer.unref();
  }
}

/** Delays before the LISTEN connection is opened again after it dropped: the first, and the most it grows to. */
export const RELISTEN_FIRST_MS = 200;
export const RELISTEN_MAX_MS = 5000;
