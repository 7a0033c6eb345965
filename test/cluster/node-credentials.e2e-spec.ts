import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { NODE_PEERS, NodePeers } from '../../src/cluster/node-peers.port';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { TestApp, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

const describePg = pgDescribe('node-credentials.e2e-spec');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Two nodes in this process on one PostgreSQL journal, each listening: what one node's credential opens on the other. */
describePg('node credentials over HTTP', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  let a: TestApp;
  let b: TestApp;
  let session: Json;
  const reaper = new WorkerReaper();
  const start = (id: string) => startTestApp({ BRAINSTEM_JOURNAL_URL: db.url, BRAINSTEM_NODE_ID: id, BRAINSTEM_NODE_LEASE_TTL_S: '4' }, { listen: true });
  const credentialOf = (app: TestApp) => (app.app.get(NODE_PEERS) as NodePeers).credential() as string;
  const call = (method: string, path: string, token: string, body?: unknown) =>
    fetch(`${a.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeAll(async () => {
    cluster = await startPgCluster();
    db = await cluster.createDatabase();
    a = await start('a');
    b = await start('b');
    const res = await a.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: tmpdir() } });
    expect(res.statusCode).toBe(201);
    session = res.json();
    reaper.track(session.pid);
  }, 60000);
  afterAll(async () => {
    reaper.killAll();
    await b?.close();
    await a?.close();
    await db?.drop();
    cluster?.stop();
  });

  it("Given b's credential, Then a answers it the output and the diff of a's session, and nothing else: no other route, no MCP", async () => {
    const token = credentialOf(b);
    expect(token).toMatch(/^bsn_/);
    const output = await call('GET', `/api/v1/coding-sessions/${session.id}/output`, token);
    expect(output.status).toBe(200);
    expect(await output.json()).toMatchObject({ id: session.id, lines: expect.any(Array) });
    // The diff too: a's answer for a session without a worktree, not a refusal of the credential.
    const diff = await call('GET', `/api/v1/coding-sessions/${session.id}/diff`, token);
    expect(diff.status).toBe(409);
    expect(await diff.json()).toMatchObject({ code: 'no_worktree' });
    const refusals: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/coding-sessions'],
      ['GET', `/api/v1/coding-sessions/${session.id}`],
      ['POST', `/api/v1/coding-sessions/${session.id}/messages`, { text: 'from a node' }],
      ['POST', `/api/v1/coding-sessions/${session.id}/merge`, { strategy: 'ff' }],
      ['POST', `/api/v1/coding-sessions/${session.id}/discard`, {}],
      ['GET', '/api/v1/auth/whoami'],
      ['GET', '/api/v1/cluster'],
    ];
    for (const [method, path, body] of refusals) {
      const res = await call(method, path, token, body);
      expect([method, path, res.status]).toEqual([method, path, 403]);
      expect(((await res.json()) as Json).message).toBe(`node b may not call ${method} ${path.replace(session.id, ':id')}`);
    }
    const mcp = await call('POST', '/mcp', token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(mcp.status).toBe(403);
    expect(((await mcp.json()) as Json).message).toBe('node b may not use MCP');
  });

  it('Given b restarted, Then the new credential is taken at once, and the one of its last start is refused from the next read of the nodes', async () => {
    const old = credentialOf(b);
    await b.close();
    b = await start('b');
    const path = `/api/v1/coding-sessions/${session.id}/output`;
    expect((await call('GET', path, credentialOf(b))).status).toBe(200);
    // a reads the nodes every third of the lease (4 s): by then the old credential is gone from what it knows.
    await waitFor(async () => (await call('GET', path, old)).status === 401, { timeoutMs: 4000, what: 'the old credential refused' });
  });
});
