import { Pool } from 'pg';
import { ClaimDecision, decideClaim } from './lease.rules';
import { LeaseStore } from './supervisor-lease.port';

type Row = { holder: string; term: string; expires_ms: number; now_ms: number };

/**
 * Leases in the journal's database (table brainstem_leases, migration 3): a claim locks the lease's row, decides on the
 * database's clock (nodes whose clocks differ still agree on expiry) and writes the outcome, in one transaction. Appends
 * fenced by a term lock the same row (PgStorage.commit), so a new term can only begin once they are committed.
 */
export class PgLeaseStore implements LeaseStore {
  private readonly pool: Pool;

  /** timeoutMs bounds a claim (connecting, each statement): one that hangs must not stop the claims after it. */
  constructor(url: string, timeoutMs: number) {
    // Its own small pool: a claim must not wait behind the journal's appends for a connection.
    this.pool = new Pool({ connectionString: url, max: 2, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
    this.pool.on('error', () => undefined);
  }

  async claim(name: string, holder: string, ttlMs: number): Promise<ClaimDecision> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      await client.query("INSERT INTO brainstem_leases (name, holder, term, expires_at) VALUES ($1, '', 0, 'epoch') ON CONFLICT (name) DO NOTHING", [name]);
      const { rows } = await client.query<Row>(
        'SELECT holder, term, extract(epoch FROM expires_at) * 1000 AS expires_ms, extract(epoch FROM clock_timestamp()) * 1000 AS now_ms FROM brainstem_leases WHERE name = $1 FOR UPDATE',
        [name],
      );
      const r = rows[0];
      const term = Number(r.term);
      const decision = decideClaim(term === 0 ? null : { holder: r.holder, term, expires_at: Number(r.expires_ms) }, holder, Number(r.now_ms), ttlMs);
      if (decision.kind !== 'refused') {
        await client.query('UPDATE brainstem_leases SET holder = $2, term = $3, expires_at = to_timestamp($4 / 1000.0) WHERE name = $1', [name, holder, decision.term, decision.expires_at]);
      }
      await client.query('COMMIT');
      return decision;
    } catch (e) {
      await client.query('ROLLBACK').catch((err: Error) => (broken = err));
      throw e;
    } finally {
      client.release(broken);
    }
  }

  async release(name: string, holder: string): Promise<void> {
    await this.pool.query('UPDATE brainstem_leases SET expires_at = clock_timestamp() WHERE name = $1 AND holder = $2 AND expires_at > clock_timestamp()', [name, holder]);
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
