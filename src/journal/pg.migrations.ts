import { GENESIS_HASH } from './canonical-json';

/**
 * The journal's schema on PostgreSQL, in order. Applied at start, each once, in one transaction under an advisory
 * lock; a released version is never edited, a change is a new migration appended here.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'journal',
    sql: `
      -- One row per event; the record is hash || prev_hash || body, body being the canonical JSON that is hashed
      -- (text, not jsonb: jsonb would reorder its keys and the hash would no longer cover the stored bytes).
      CREATE TABLE brainstem_events (
        seq bigint PRIMARY KEY,
        stream text NOT NULL,
        version integer NOT NULL,
        hash text NOT NULL,
        prev_hash text NOT NULL,
        body text NOT NULL,
        UNIQUE (stream, version)
      );
      -- One row: the head every commit moves (and locks), and the last checkpoint.
      CREATE TABLE brainstem_head (
        id boolean PRIMARY KEY DEFAULT true CHECK (id),
        seq bigint NOT NULL,
        hash text NOT NULL,
        checkpoint_seq bigint,
        checkpoint_hash text
      );
      INSERT INTO brainstem_head (seq, hash) VALUES (0, '${GENESIS_HASH}');
      CREATE TABLE brainstem_snapshots (
        stream text PRIMARY KEY,
        body text NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'nodes',
    sql: `
      -- The Brainstem nodes sharing this database: each upserts its row at start and heartbeats it; the times are
      -- the database's clock, so nodes on machines whose clocks differ judge each other's silence alike.
      CREATE TABLE brainstem_nodes (
        node_id text PRIMARY KEY,
        started_at timestamptz NOT NULL,
        heartbeat_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'leases',
    sql: `
      -- One row per lease (the supervisor's): who holds it, its term (one more at each change of holder, the fence of
      -- the holder's appends), and until when (the database's clock).
      CREATE TABLE brainstem_leases (
        name text PRIMARY KEY,
        holder text NOT NULL,
        term bigint NOT NULL,
        expires_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'peers',
    sql: `
      -- What a node's heartbeat says besides that it lives: where the other nodes reach it, the sha256 of the credential
      -- it calls them with (a new one each start), the seq its journal had read and the database's head at that beat
      -- (its lag), and when it stopped cleanly (cleared at its next start).
      ALTER TABLE brainstem_nodes
        ADD COLUMN url text,
        ADD COLUMN credential_digest text,
        ADD COLUMN seq bigint,
        ADD COLUMN head_seq bigint,
        ADD COLUMN stopped_at timestamptz;
    `,
  },
  {
    version: 5,
    name: 'round followers',
    sql: `
      -- How many clients follow the rounds stream on the node (a brain the user brings), as of its heartbeat: a node
      -- taking the supervisor lease keeps the round in flight that such a brain, on a live node, still drives.
      ALTER TABLE brainstem_nodes ADD COLUMN round_listeners integer NOT NULL DEFAULT 0;
    `,
  },
];

/** The schema version of this release: its last migration's. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** Key of the advisory lock held while migrations run: two nodes starting together apply each migration once. */
export const MIGRATION_LOCK = 0x62726e73; // 'brns'
/** Channel of the NOTIFY sent with every commit; its payload is the new head seq. */
export const JOURNAL_CHANNEL = 'brainstem_journal';
