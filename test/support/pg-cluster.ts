import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';

/**
 * A throwaway PostgreSQL cluster for the specs and the bench: initdb into a temp dir, started with pg_ctl on a unix
 * socket in that dir only (no TCP port), a fresh database per test, stopped with `pg_ctl stop -m immediate`.
 * As root it runs as the `postgres` user (PostgreSQL refuses to run as root), which then owns the temp dir.
 */

/** The directory of initdb and pg_ctl: pg_config --bindir, else the newest /usr/lib/postgresql/<ver>/bin; null if none. */
export function findPgBin(): string | null {
  const has = (dir: string) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'));
  const config = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const fromConfig = config.status === 0 ? config.stdout.trim() : '';
  if (fromConfig && has(fromConfig)) return fromConfig;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  return versions.map((v) => join(root, v, 'bin')).find(has) ?? null;
}

/**
 * `describe` for a spec that needs PostgreSQL. Outside CI a machine without it skips the spec, saying so; CI installs
 * it, and there a missing server fails the spec.
 */
export function pgDescribe(spec: string): jest.Describe {
  if (findPgBin() !== null || process.env.CI) return describe;
  console.warn(`${spec}: PostgreSQL not found (initdb, pg_ctl): skipped`);
  return describe.skip;
}

export interface PgDatabase {
  name: string;
  url: string;
  /** Runs SQL on this database (tampering in tests), on a connection of its own. */
  sql(text: string, values?: unknown[]): Promise<Array<Record<string, unknown>>>;
  drop(): Promise<void>;
}

export interface PgCluster {
  dir: string;
  /** A new empty database. */
  createDatabase(): Promise<PgDatabase>;
  /** The server crashes (`pg_ctl stop -m immediate`) and nothing answers until start(). */
  crash(): void;
  /** Starts the server again on the same data (after crash()), with crash recovery. */
  start(): void;
  stop(): void;
}

const PORT = 5432;

export async function startPgCluster(options: { durable?: boolean } = {}): Promise<PgCluster> {
  const bin = findPgBin();
  if (!bin) throw new Error('PostgreSQL not found (no pg_config --bindir, no /usr/lib/postgresql/<ver>/bin): install the postgresql package');
  const dir = mkdtempSync(join(tmpdir(), 'brainstem-pg-'));
  const asUser: string[] = [];
  if (process.getuid?.() === 0) {
    const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, id('-u'), id('-g'));
    asUser.push('runuser', '-u', 'postgres', '--');
  }
  const run = (tool: string, args: string[]) => {
    const [cmd, ...rest] = [...asUser, join(bin, tool), ...args];
    const r = spawnSync(cmd, rest, { encoding: 'utf8', cwd: dir });
    if (r.status !== 0) {
      const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8') : '';
      throw new Error(`${tool} failed (${r.status ?? r.error?.message}): ${r.stderr}${r.stdout}${log}`);
    }
  };
  const data = join(dir, 'data');
  // The specs need no durability; the bench and the crash specs run with fsync on, as a real server runs.
  const settings = `-k ${dir} -p ${PORT} -c listen_addresses='' ${options.durable ? '' : '-c fsync=off -c synchronous_commit=off'}`;
  const start = () => run('pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', join(dir, 'log'), '-o', settings]);
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
    start();
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const urlOf = (db: string) => `postgresql://postgres@localhost:${PORT}/${db}?host=${encodeURIComponent(dir)}`;
  const sql = async (db: string, text: string, values?: unknown[]) => {
    const client = new Client({ connectionString: urlOf(db) });
    await client.connect();
    try {
      return (await client.query(text, values)).rows as Array<Record<string, unknown>>;
    } finally {
      await client.end();
    }
  };
  let databases = 0;
  return {
    dir,
    async createDatabase() {
      const name = `t${++databases}`;
      await sql('postgres', `CREATE DATABASE ${name}`);
      return {
        name,
        url: urlOf(name),
        sql: (text, values) => sql(name, text, values),
        drop: async () => void (await sql('postgres', `DROP DATABASE ${name} WITH (FORCE)`)),
      };
    },
    crash() {
      run('pg_ctl', ['stop', '-D', data, '-m', 'immediate']);
    },
    start,
    stop() {
      try {
        run('pg_ctl', ['stop', '-D', data, '-m', 'immediate']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
