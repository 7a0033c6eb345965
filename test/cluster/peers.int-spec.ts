import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { ServiceProcess, startService } from '../support/service-process';
import { openSse } from '../support/sse';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

const describePg = pgDescribe('peers.int-spec');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const LONG = { timeoutMs: 60000 };
/** Short, so a killed node counts as down soon; not so short that a node slowed by a loaded machine seems down. */
const LEASE_TTL_S = 4;

interface Node {
  id: string;
  env: Record<string, string>;
  service: ServiceProcess;
  dir: ReturnType<typeof tempDir>;
}

/** Every node a full peer: three real service processes on one PostgreSQL journal, each with its own directories. */
describePg('three nodes as full peers (real processes on one PostgreSQL journal)', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  const nodes = new Map<string, Node>();
  const reaper = new WorkerReaper();
  const node = (id: string) => nodes.get(id) as Node;

  const api = async (id: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> => {
    const n = node(id);
    const res = await fetch(`${n.service.url}/api/v1${path}`, {
      method,
      headers: { ...n.service.auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? (JSON.parse(text) as Json) : {} };
  };
  const worker = async (id: string, title: string, extra: Json = {}): Promise<Json> => {
    const res = await api(id, 'POST', '/coding-sessions', { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'node-worker.js')], cwd: tmpdir(), title, ...extra });
    expect(res.status).toBe(201);
    reaper.track(res.json.pid);
    return res.json;
  };
  const lines = async (id: string, session: string) => {
    const res = await api(id, 'GET', `/coding-sessions/${session}/output?tail=50`);
    if (res.status !== 200) throw new Error(`GET output on ${id} answered ${res.status} ${JSON.stringify(res.json)}`);
    return res.json.lines as string[];
  };

  beforeAll(async () => {
    cluster = await startPgCluster();
    db = await cluster.createDatabase();
    for (const id of ['a', 'b', 'c']) {
      const dir = tempDir(`brainstem-peer-${id}-`);
      // Each node its own user token, journal directory (credentials, logs), profiles directory and port; one database.
      const env = {
        BRAINSTEM_JOURNAL_URL: db.url,
        BRAINSTEM_JOURNAL_DIR: join(dir.path, 'journal'),
        BRAINSTEM_PROFILES_DIR: join(dir.path, 'profiles'),
        BRAINSTEM_NODE_ID: id,
        BRAINSTEM_NODE_LEASE_TTL_S: String(LEASE_TTL_S),
        BRAINSTEM_API_TOKEN: `token-of-node-${id}`,
      };
      nodes.set(id, { id, env, dir, service: await startService(env) });
    }
    // Each node has advertised its address once it listened: the others read it at their next heartbeat.
    await waitFor(async () => ((await api('a', 'GET', '/cluster')).json.nodes as Json[]).filter((n) => n.url !== null).length === 3, { ...LONG, what: 'the three addresses' });
  }, 180000);

  afterAll(async () => {
    for (const n of nodes.values()) {
      if (n.service.child.exitCode === null && n.service.child.signalCode === null) {
        n.service.child.kill('SIGTERM');
        await n.service.exited;
      }
    }
    reaper.killAll();
    for (const n of nodes.values()) n.dir.remove();
    await db?.drop();
    cluster?.stop();
  }, 60000);

  it('Given a profile saved on node a, Then within 1 s node b lists it and has started a session with it', async () => {
    const saved = await api('a', 'POST', '/agent-profiles', { name: 'Peer Reviewer', description: 'saved on a' });
    expect(saved.status).toBe(201);
    const t0 = performance.now();
    await waitFor(async () => ((await api('b', 'GET', '/agent-profiles')).json.profiles as Json[]).some((p) => p.id === 'peer-reviewer'), {
      timeoutMs: 5000,
      intervalMs: 10,
      what: 'b to list the profile saved on a',
    });
    expect((await api('b', 'GET', '/agent-profiles/peer-reviewer')).json).toMatchObject({ id: 'peer-reviewer', description: 'saved on a', error: null });
    const started = await worker('b', 'with the profile of a', { profile_id: 'peer-reviewer' });
    const usableAfter = performance.now() - t0;
    // Listed on b, and a session started there with it, within a second of the save's answer on a.
    expect(usableAfter).toBeLessThan(1000);
    expect(started).toMatchObject({ node: 'b', profile_id: 'peer-reviewer' });
    await waitFor(async () => (await lines('b', started.id)).some((l) => l.startsWith('worker ')), { ...LONG, what: 'its worker to start' });
  }, 60000);

  it("Given a's worker, Then its output and its live tail read through b and c are a's; a node's user token is no credential on another", async () => {
    const s = await worker('a', 'output read elsewhere');
    expect((await api('a', 'POST', `/coding-sessions/${s.id}/messages`, { text: 'first' })).status).toBe(200);
    await waitFor(async () => (await lines('a', s.id)).includes('got: first'), { ...LONG, what: "a's worker to echo" });
    // The tail through another node is the owner's, line for line.
    expect(await lines('b', s.id)).toEqual(await lines('a', s.id));
    expect((await api('c', 'GET', `/coding-sessions/${s.alias}/output?tail=1`)).json).toEqual({ id: s.id, alias: s.alias, lines: ['got: first'] });

    // The live tail through c: the tail first, then what the worker writes on a after a message sent through b.
    const sse = await openSse(`${node('c').service.url}/api/v1/coding-sessions/${s.id}/output/stream?tail=5`, node('c').service.auth);
    try {
      const [tail] = await sse.take(1);
      expect(tail.event).toBe('tail');
      expect(JSON.parse(tail.data).lines).toContain('got: first');
      expect((await api('b', 'POST', `/coding-sessions/${s.id}/messages`, { text: 'second' })).status).toBe(200);
      let seen = '';
      while (!seen.includes('got: second\n')) {
        const [next] = await sse.take(1);
        expect(next.event).toBe('output');
        seen += JSON.parse(next.data).text as string;
      }
    } finally {
      sse.close();
    }

    // Each node has its own user token: b's is refused by a, and so is a made-up node credential.
    const asB = await fetch(`${node('a').service.url}/api/v1/coding-sessions/${s.id}/output`, { headers: node('b').service.auth });
    expect(asB.status).toBe(401);
    const forged = await fetch(`${node('a').service.url}/api/v1/coding-sessions/${s.id}/output`, { headers: { authorization: 'Bearer bsn_not-a-node-credential' } });
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as Json).message).toBe('invalid credential: not the credential of a node sharing this journal');
  }, 60000);

  it('Given the cluster, Then every node lists the three nodes, the lease holder and its term, the sessions of each and their lag', async () => {
    const owners = ((await api('a', 'GET', '/coding-sessions')).json.sessions as Json[]).map((s) => s.node as string);
    const count = (id: string) => owners.filter((o) => o === id).length;
    const holder = (await db.sql('SELECT holder, term FROM brainstem_leases WHERE term > 0'))[0];
    for (const id of ['a', 'b', 'c']) {
      const view = await waitFor(
        async () => {
          const v = (await api(id, 'GET', '/cluster')).json;
          // Each node's seq is the one of its last heartbeat: once no event is appended, each reaches the head.
          return (v.nodes as Json[]).every((n) => n.lag === 0 && n.seq === v.head_seq) && v;
        },
        { ...LONG, what: `${id}'s view with every node caught up` },
      );
      expect(view).toMatchObject({ self: id, shared: true, lease: { holder: holder.holder, term: Number(holder.term), expired: false } });
      expect(view.lease.expires_in_ms).toBeGreaterThan(0);
      expect(view.lease.expires_in_ms).toBeLessThanOrEqual(LEASE_TTL_S * 1000);
      expect((view.nodes as Json[]).map((n) => [n.id, n.self, n.state, n.leader, n.url, n.sessions.total])).toEqual(
        ['a', 'b', 'c'].map((n) => [n, n === id, 'up', n === holder.holder, node(n).service.url, count(n)]),
      );
    }
  }, 60000);

  it("Given c killed, Then reading its worker's output through a is refused 503 owner_unavailable naming c, live tail included, and a's view shows c down", async () => {
    const s = await worker('c', 'on a node about to die');
    await waitFor(async () => (await lines('a', s.id)).some((l) => l.startsWith('worker ')), { ...LONG, what: "c's worker output through a" });
    const c = node('c');
    c.service.child.kill('SIGKILL');
    await c.service.exited;
    // Still within its lease c is not heard from: a asks and gets no answer. Past it, a does not ask.
    for (const path of [`/coding-sessions/${s.id}/output`, `/coding-sessions/${s.id}/output/stream`]) {
      const refused = await api('a', 'GET', path);
      expect(refused.status).toBe(503);
      expect(refused.json).toMatchObject({ code: 'owner_unavailable', details: { node: 'c' } });
      expect(refused.json.message).toContain('node c');
    }
    const view = await waitFor(
      async () => {
        const v = (await api('a', 'GET', '/cluster')).json;
        return (v.nodes as Json[]).find((n) => n.id === 'c')?.state === 'down' && v;
      },
      { ...LONG, what: 'a to see c down' },
    );
    expect((view.nodes as Json[]).find((n) => n.id === 'c')).toMatchObject({ leader: false, sessions: { total: 1, live: 1 } });
    const past = await api('a', 'GET', `/coding-sessions/${s.id}/output/stream`);
    expect(past.json).toMatchObject({ statusCode: 503, code: 'owner_unavailable', details: { node: 'c' } });
    expect(past.json.message).toContain('has not been heard from within its lease');

    // b stops cleanly: the others see it stopped at once.
    const b = node('b');
    b.service.child.kill('SIGTERM');
    await b.service.exited;
    expect(((await api('a', 'GET', '/cluster')).json.nodes as Json[]).find((n) => n.id === 'b')?.state).toBe('stopped');
  }, 60000);
});
