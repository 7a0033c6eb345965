import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { call as mcpCall, httpClient } from '../mcp/mcp-client';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { ServiceProcess, startService } from '../support/service-process';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

const describePg = pgDescribe('nodes.int-spec');

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const LONG = { timeoutMs: 60000 };
/** Short, so a killed node counts as down soon (heartbeats every third of it); not so short that a node slowed by a loaded machine seems down. */
const LEASE_TTL_S = 4;

interface Node {
  id: string;
  env: Record<string, string>;
  service: ServiceProcess;
  dir: ReturnType<typeof tempDir>;
  /** Every event this node's SSE (/events/stream from seq 0) delivered, in order. */
  seen: Array<{ seq: number; type: string; stream: string; hash: string }>;
  closeSse: () => void;
}

/** GET /events/stream?after_seq=0, collected into `into` until closed. */
function collectSse(url: string, headers: Record<string, string>, into: Node['seen']): Promise<() => void> {
  return new Promise((done, fail) => {
    let buf = '';
    const req = request(`${url}/api/v1/events/stream?after_seq=0`, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      if (res.statusCode !== 200) return fail(new Error(`SSE answered ${res.statusCode}`));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const data = buf
            .slice(0, i)
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('');
          buf = buf.slice(i + 2);
          if (data) {
            const e = JSON.parse(data) as Json;
            into.push({ seq: e.seq, type: e.type, stream: e.stream, hash: e.hash });
          }
        }
      });
      res.on('error', () => undefined);
      done(() => req.destroy());
    });
    req.on('error', () => undefined);
    req.end();
  });
}

describePg('three Brainstem nodes on one PostgreSQL journal (real processes)', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  const nodes = new Map<string, Node>();
  const reaper = new WorkerReaper();

  const api = async (node: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> => {
    const n = nodes.get(node) as Node;
    const res = await fetch(`${n.service.url}/api/v1${path}`, {
      method,
      headers: { ...n.service.auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? (JSON.parse(text) as Json) : {} };
  };
  const status = async (node: string, session: string): Promise<Json> => (await api(node, 'GET', `/coding-sessions/${session}`)).json;

  beforeAll(async () => {
    cluster = await startPgCluster();
    db = await cluster.createDatabase();
    for (const id of ['a', 'b', 'c']) {
      const dir = tempDir(`brainstem-node-${id}-`);
      // Each node its own user token, journal directory (credentials, logs) and port; one database.
      const env = {
        BRAINSTEM_JOURNAL_URL: db.url,
        BRAINSTEM_JOURNAL_DIR: dir.path,
        BRAINSTEM_NODE_ID: id,
        BRAINSTEM_NODE_LEASE_TTL_S: String(LEASE_TTL_S),
        BRAINSTEM_API_TOKEN: `token-of-node-${id}`,
      };
      const service = await startService(env);
      const seen: Node['seen'] = [];
      const closeSse = await collectSse(service.url, service.auth, seen);
      nodes.set(id, { id, env, service, dir, seen, closeSse });
    }
  }, 180000);

  afterAll(async () => {
    for (const n of nodes.values()) {
      n.closeSse();
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

  it('each node runs its own worker; every node sees all sessions; commands reach the owner; a dead owner is refused 503; no event lost or duplicated', async () => {
    // Each node starts its own worker.
    const sessions = new Map<string, Json>();
    for (const id of ['a', 'b', 'c']) {
      const res = await api(id, 'POST', '/coding-sessions', {
        runtime: 'command',
        command: process.execPath,
        args: [resolve(WORKERS, 'node-worker.js')],
        cwd: tmpdir(),
        title: `worker of ${id}`,
      });
      expect(res.status).toBe(201);
      expect(res.json.node).toBe(id);
      reaper.track(res.json.pid);
      sessions.set(id, res.json);
    }
    const idOf = (node: string) => (sessions.get(node) as Json).id as string;
    // Aliases are numbered once across the nodes.
    expect(new Set([...sessions.values()].map((s) => s.alias)).size).toBe(3);

    // Every node lists all three, each with its owner, once their workers report.
    for (const id of ['a', 'b', 'c']) {
      await waitFor(
        async () => {
          const list = (await api(id, 'GET', '/coding-sessions')).json.sessions as Json[];
          const owners = Object.fromEntries(list.map((s) => [s.id, s.node]));
          return ['a', 'b', 'c'].every((n) => owners[idOf(n)] === n) && list.every((s) => s.last_progress?.message === 'started');
        },
        { ...LONG, what: `node ${id} to list the three sessions with their owners` },
      );
    }

    // And every node's MCP: list_sessions on b names the three.
    const mcp = await httpClient((nodes.get('b') as Node).service.url, { token: (nodes.get('b') as Node).service.token });
    try {
      const listed = await mcpCall(mcp, 'list_sessions', {});
      expect(listed.isError).toBe(false);
      expect((listed.json.sessions as Json[]).map((s) => s.id).sort()).toEqual(['a', 'b', 'c'].map(idOf).sort());
    } finally {
      await mcp.close();
    }

    // A message to a's session through c reaches a's worker: it echoes it (in a's log) and reports it (seen by all).
    const sent = await api('c', 'POST', `/coding-sessions/${idOf('a')}/messages`, { text: 'hello from c' });
    expect(sent.status).toBeLessThan(300);
    await waitFor(async () => ((await api('a', 'GET', `/coding-sessions/${idOf('a')}/output`)).json.lines as string[]).includes('got: hello from c'), {
      ...LONG,
      what: "a's worker to get the message sent through c",
    });
    await waitFor(async () => (await status('c', idOf('a'))).last_progress?.message === 'did hello from c', { ...LONG, what: 'c to see what a reported' });

    // Messages to a's session through a and through c at once: the nodes race on its stream (and the worker reports
    // each): every command is answered, a loser deciding again after the winner's event, and each reaches the worker once.
    const burst = Array.from({ length: 12 }, (_, i) => ({ via: i % 2 === 0 ? 'a' : 'c', text: `m${i}` }));
    const answers = await Promise.all(burst.map((m) => api(m.via, 'POST', `/coding-sessions/${idOf('a')}/messages`, { text: m.text })));
    expect(answers.filter((r) => r.status >= 300)).toEqual([]);
    const got = await waitFor(
      async () => {
        const lines = ((await api('a', 'GET', `/coding-sessions/${idOf('a')}/output`)).json.lines as string[]).filter((l) => /^got: m\d+$/.test(l));
        return lines.length >= burst.length && lines;
      },
      { ...LONG, what: "a's worker to get every message of the burst" },
    );
    expect([...got].sort()).toEqual(burst.map((m) => `got: ${m.text}`).sort());

    // b's worker asks permission (MCP permission_prompt on b); allowed through a; b's worker moves on.
    expect((await api('b', 'POST', `/coding-sessions/${idOf('b')}/messages`, { text: 'ask Bash' })).status).toBeLessThan(300);
    await waitFor(async () => (await status('a', idOf('b'))).state === 'pending_authorization', { ...LONG, what: "a to see b's worker wait for permission" });
    const allowed = await api('a', 'POST', `/coding-sessions/${idOf('b')}/permission`, { decision: 'allow' });
    expect(allowed.status).toBe(200);
    await waitFor(async () => (await status('b', idOf('b'))).last_progress?.message === 'answered allow', { ...LONG, what: "b's worker to move on once allowed through a" });

    // An SSE client on b sees an event appended on a (its exclusion), by seq and hash.
    const b = nodes.get('b') as Node;
    const excluded = await api('a', 'PATCH', `/coding-sessions/${idOf('a')}/supervision`, { excluded: true });
    expect(excluded.status).toBe(200);
    const change = await waitFor(
      () => b.seen.find((e) => e.type === 'session.exclusion_changed' && e.stream === `session-${idOf('a')}`),
      { ...LONG, what: "b's SSE to show the exclusion appended on a" },
    );
    expect(change.seq).toBeGreaterThan(0);

    // The main chat: a message posted on a is listed by every node, with its seq.
    const posted = await api('a', 'POST', '/session-os/main-brain/messages', { text: 'a note for every node' });
    expect(posted.status).toBe(201);
    for (const id of ['b', 'c']) {
      await waitFor(
        async () => ((await api(id, 'GET', '/session-os/main-brain/messages')).json.messages as Json[]).some((m) => m.seq === posted.json.message.seq && m.text === 'a note for every node'),
        { ...LONG, what: `node ${id}'s chat to list the message posted on a` },
      );
    }

    // A worker's question lands in the chat once, posted by its owner alone: markers posted on b and c after they
    // followed the question come after anything they would have posted for it.
    const questions = async () => (await db.sql(`SELECT body FROM brainstem_events WHERE stream = 'chat' AND body LIKE '%"kind":"question"%'`)).length;
    expect((await api('a', 'POST', `/coding-sessions/${idOf('a')}/signals`, { type: 'ask_human', question: 'ship it?' })).status).toBe(200);
    for (const id of ['b', 'c']) {
      await waitFor(async () => (await status(id, idOf('a'))).state === 'pending_decision', { ...LONG, what: `${id} to follow the question` });
      expect((await api(id, 'POST', '/session-os/main-brain/messages', { text: `marker of ${id}` })).status).toBe(201);
    }
    await waitFor(
      async () => {
        const texts = ((await api('a', 'GET', '/session-os/main-brain/messages')).json.messages as Json[]).map((m) => m.text);
        return texts.includes('ship it?') && texts.includes('marker of b') && texts.includes('marker of c');
      },
      { ...LONG, what: "a's chat to list the question and both markers" },
    );
    expect(await questions()).toBe(1);

    // The user answers that question on b, which followed it: the answer is posted naming it and reaches a's worker.
    const question = ((await api('b', 'GET', '/session-os/main-brain/messages')).json.messages as Json[]).find((m) => m.kind === 'question' && m.text === 'ship it?') as Json;
    const answered = await api('b', 'POST', '/session-os/main-brain/messages', { text: 'ship it now', answer_to: question.seq });
    expect(answered.status).toBe(201);
    expect(answered.json.message).toMatchObject({ role: 'user', session_id: idOf('a'), answer_to: question.seq });
    await waitFor(async () => ((await api('a', 'GET', `/coding-sessions/${idOf('a')}/output`)).json.lines as string[]).includes('got: ship it now'), {
      ...LONG,
      what: "a's worker to get the answer given on b",
    });
    // And answered once: c, which followed the answer, refuses another, naming the user's answer on b.
    const again = await api('c', 'POST', '/session-os/main-brain/messages', { text: 'hold it', answer_to: question.seq });
    expect([again.status, again.json.code, again.json.details]).toMatchObject([409, 'question_already_answered', { answered_by: 'user', via: 'chat', answer_seq: answered.json.message.seq }]);

    // The three nodes post to the chat at once, racing on its stream: every post is answered (a loser decides again
    // after the winner's message), the stream's versions run without a gap, and every node lists the posts in seq order.
    const chatBurst = Array.from({ length: 9 }, (_, i) => ({ via: ['a', 'b', 'c'][i % 3], text: `chat burst ${i}` }));
    const chatPosts = await Promise.all(chatBurst.map((m) => api(m.via, 'POST', '/session-os/main-brain/messages', { text: m.text })));
    expect(chatPosts.map((r) => r.status)).toEqual(chatBurst.map(() => 201));
    const bySeq = chatPosts.map((r) => r.json.message as Json).sort((x, y) => x.seq - y.seq).map((m) => m.text);
    const versions = (await db.sql(`SELECT version FROM brainstem_events WHERE stream = 'chat' ORDER BY seq`)).map((r) => Number(r.version));
    expect(versions).toEqual(versions.map((_, i) => i + 1));
    for (const id of ['a', 'b', 'c']) {
      const listed = await waitFor(
        async () => {
          const texts = ((await api(id, 'GET', '/session-os/main-brain/messages')).json.messages as Json[]).map((m) => m.text as string).filter((t) => t.startsWith('chat burst '));
          return texts.length === chatBurst.length && texts;
        },
        { ...LONG, what: `node ${id}'s chat to list the burst` },
      );
      expect(listed).toEqual(bySeq);
    }

    // Node c dies (SIGKILL): once its heartbeat is past the TTL, a refuses a command for c's session, naming c.
    const c = nodes.get('c') as Node;
    c.closeSse();
    c.service.child.kill('SIGKILL');
    await c.service.exited;
    const refused = await waitFor(
      async () => {
        const r = await api('a', 'POST', `/coding-sessions/${idOf('c')}/messages`, { text: 'anyone there?' });
        return r.status === 503 ? r : r.status < 300 ? undefined : (() => { throw new Error(`answered ${r.status} ${JSON.stringify(r.json)}`); })();
      },
      { ...LONG, what: "a to refuse c's session once c is past its lease" },
    );
    expect(refused.json).toMatchObject({ statusCode: 503, code: 'owner_unavailable', details: { node: 'c' } });
    expect(refused.json.message).toContain('node c');

    // No event lost or duplicated: each surviving node's SSE has the journal's events, in order, once each; c's a prefix.
    const stored = (await db.sql('SELECT seq, stream, hash FROM brainstem_events ORDER BY seq')).map((r) => ({ seq: Number(r.seq), stream: String(r.stream), hash: String(r.hash) }));
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
    for (const n of [nodes.get('a') as Node, b]) {
      await waitFor(() => n.seen.length >= stored.length, { ...LONG, what: `node ${n.id}'s SSE to catch up with the journal` });
      expect(n.seen.map(({ seq, stream, hash }) => ({ seq, stream, hash }))).toEqual(stored);
    }
    expect(c.seen.length).toBeGreaterThan(0);
    expect(c.seen.map(({ seq, stream, hash }) => ({ seq, stream, hash }))).toEqual(stored.slice(0, c.seen.length));

    // b restarts: it recovers its own worker, and leaves a's and c's sessions (their workers run on this machine too) alone.
    b.closeSse();
    b.service.child.kill('SIGTERM');
    await b.service.exited;
    b.service = await startService(b.env);
    const recoveredBy = async (stream: string) =>
      (await db.sql(`SELECT body FROM brainstem_events WHERE stream = $1 AND body LIKE '%"type":"session.recovered"%'`, [stream])).length;
    await waitFor(async () => (await recoveredBy(`session-${idOf('b')}`)) === 1, { ...LONG, what: 'b to recover its own worker' });
    expect((await status('b', idOf('b'))).state).not.toBe('exited');
    for (const other of ['a', 'c']) {
      expect(await recoveredBy(`session-${idOf(other)}`)).toBe(0);
      expect((await status('b', idOf(other))).state).not.toBe('exited');
    }
  }, 240000);
});
