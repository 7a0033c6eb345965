import { join } from 'node:path';
import { PgCluster, PgDatabase, startPgCluster } from './pg-cluster';
import { ServiceProcess, startService } from './service-process';
import { tempDir } from './temp-dir';
import { WorkerReaper } from './workers';

export interface PgNodes {
  /** This test's database: every node's journal. */
  readonly db: PgDatabase;
  /** This test's folder: each node's own directory is in it, under its id. */
  readonly dir: { readonly path: string };
  /** Workers the test started, killed after it (they outlive their node, as workers do). */
  readonly reaper: WorkerReaper;
  /** A node: a real service process on the database, as `id`, with `env` besides. */
  boot(id: string, env?: Record<string, string>): Promise<ServiceProcess>;
}

/**
 * Real service processes as the nodes of one PostgreSQL journal, for the describe it is called in: each test gets a
 * fresh database and folder, and after it every node still running is killed (one paused with SIGSTOP resumed first, so
 * it can die) and its workers with it.
 */
export function usePgNodes(prefix: string): PgNodes {
  let cluster: PgCluster;
  let db: PgDatabase;
  let dir: ReturnType<typeof tempDir>;
  const reaper = new WorkerReaper();
  const nodes: ServiceProcess[] = [];

  beforeAll(async () => {
    cluster = await startPgCluster();
  });
  afterAll(() => cluster?.stop());
  beforeEach(async () => {
    db = await cluster.createDatabase();
    dir = tempDir(prefix);
  });
  afterEach(async () => {
    for (const n of nodes.splice(0)) {
      if (n.child.exitCode === null) {
        n.child.kill('SIGCONT');
        n.child.kill('SIGKILL');
        await n.exited;
      }
    }
    reaper.killAll();
    await db.drop();
    dir.remove();
  });

  return {
    get db() {
      return db;
    },
    get dir() {
      return dir;
    },
    reaper,
    async boot(id, env = {}) {
      const svc = await startService({ BRAINSTEM_JOURNAL_URL: db.url, BRAINSTEM_JOURNAL_DIR: join(dir.path, id), BRAINSTEM_NODE_ID: id, ...env });
      nodes.push(svc);
      return svc;
    },
  };
}
