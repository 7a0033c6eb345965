import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { join, resolve } from 'node:path';
import { REPORT_TIMEOUT_MS } from '../../src/cli/claude-hook';
import { tempDir } from '../support/temp-dir';

const BIN = resolve(__dirname, '../../bin/brainstem.js');

/** The hook as claude runs it: `brainstem hook <event> …` as a process, the event on stdin. */
function hook(event: string, url: string, tokenFile: string, input: object, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; err: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, 'hook', event, '--url', url, '--token-file', tokenFile], { env: { PATH: process.env.PATH, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  child.stdin.end(JSON.stringify(input));
  return new Promise((r) => child.on('close', (code) => r({ code, out, err, ms: Date.now() - started })));
}

/** A stand-in for the service's hook routes: `answer` says what each request gets (null: no answer ever). */
async function service(answer: (path: string, body: unknown, auth: string | undefined) => { status: number; body: unknown } | null): Promise<{ url: string; server: Server; seen: Array<{ path: string; body: unknown }> }> {
  const seen: Array<{ path: string; body: unknown }> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString('utf8')));
    req.on('end', () => {
      const body: unknown = JSON.parse(data || 'null');
      seen.push({ path: req.url ?? '', body });
      const a = answer(req.url ?? '', body, req.headers.authorization);
      if (a) res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server, seen };
}

const close = (s: Server) =>
  new Promise<void>((r) => {
    s.closeAllConnections();
    s.close(() => r());
  });

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

const STOP = { session_id: 's1', transcript_path: '/h/.claude/projects/-r/s1.jsonl', cwd: '/r', hook_event_name: 'Stop', stop_hook_active: false };

/**
 * The hook never blocks claude: a service down, slow or refusing makes it exit 0 at once printing nothing; it prints only
 * a decision the service answered, in claude's own shape (checked against claude 2.1.332 in test/external).
 */
describe('brainstem hook <event> (what claude runs)', () => {
  const dir = tempDir('brainstem-hook-client-');
  const tokenFile = () => {
    const f = join(dir.path, 'hook-token');
    writeFileSync(f, 'bsh_test\n', { mode: 0o600 });
    return f;
  };
  afterAll(() => dir.remove());

  it('Given no service listening, Then it exits 0 at once, printing nothing', async () => {
    const r = await hook('Stop', `http://127.0.0.1:${await closedPort()}`, tokenFile(), STOP);
    expect(r).toMatchObject({ code: 0, out: '', err: '' });
  });

  it(`Given a service that does not answer, Then it gives up after ${REPORT_TIMEOUT_MS} ms: exit 0, nothing printed`, async () => {
    const s = await service(() => null);
    try {
      const r = await hook('Stop', s.url, tokenFile(), STOP);
      expect(r).toMatchObject({ code: 0, out: '' });
      expect(s.seen).toHaveLength(1);
      // Its own start (node) plus the report's bound, with room for a loaded machine; the answer never came.
      expect(r.ms).toBeLessThan(REPORT_TIMEOUT_MS + 2000);
    } finally {
      await close(s.server);
    }
  });

  it('Given a service refusing the report, answering nonsense, or a token file missing, Then nothing is printed and it exits 0', async () => {
    const refusing = await service(() => ({ status: 401, body: { code: 'unauthorized' } }));
    const nonsense = await service(() => ({ status: 200, body: { wait: { id: 7 } } }));
    try {
      for (const url of [refusing.url, nonsense.url]) expect(await hook('Stop', url, tokenFile(), STOP)).toMatchObject({ code: 0, out: '' });
      expect(await hook('Stop', refusing.url, join(dir.path, 'missing'), STOP)).toMatchObject({ code: 0, out: '' });
      expect(await hook('Stop', refusing.url, tokenFile(), { not: 'closed json' })).toMatchObject({ code: 0, out: '' });
    } finally {
      await close(refusing.server);
      await close(nonsense.server);
    }
  });

  it("Given a Stop the service answers with a wait and then a message, Then it prints claude's block with that text as the reason; it sent the event and claude's pid with the hook token", async () => {
    const s = await service((path, _body, auth) => {
      if (auth !== 'Bearer bsh_test') return { status: 401, body: {} };
      if (path === '/api/v1/external/claude/events/Stop') return { status: 200, body: { session: { id: 'cs_1' }, wait: { id: 'hw_1', timeout_s: 5 } } };
      if (path === '/api/v1/external/claude/waits/hw_1') return { status: 200, body: { decision: { kind: 'continue', text: 'now the tests' } } };
      return { status: 404, body: {} };
    });
    try {
      const r = await hook('Stop', s.url, tokenFile(), STOP, { CLAUDE_PID: '4242' });
      expect(r).toMatchObject({ code: 0, err: '' });
      expect(JSON.parse(r.out)).toEqual({ decision: 'block', reason: 'now the tests' });
      expect(s.seen[0].body).toEqual({ event: STOP, claude_pid: 4242 });
    } finally {
      await close(s.server);
    }
  });

  it.each([
    ['allow', null, { behavior: 'allow' }],
    ['deny', 'not here', { behavior: 'deny', message: 'not here' }],
  ] as const)('Given a PermissionRequest answered %s, Then it prints the decision in claude\'s shape', async (behavior, message, printed) => {
    const s = await service((path) =>
      path.endsWith('/events/PermissionRequest')
        ? { status: 200, body: { wait: { id: 'hw_2', timeout_s: 5 } } }
        : { status: 200, body: { decision: { kind: 'permission', behavior, message } } },
    );
    try {
      const r = await hook('PermissionRequest', s.url, tokenFile(), { ...STOP, hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'ls' } });
      expect(JSON.parse(r.out)).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: printed } });
    } finally {
      await close(s.server);
    }
  });

  it('Given a wait that ends with no decision, or a decision of the wrong kind for the event, Then nothing is printed', async () => {
    const none = await service((path) => (path.includes('/events/') ? { status: 200, body: { wait: { id: 'hw_3', timeout_s: 5 } } } : { status: 200, body: { decision: null } }));
    const wrong = await service((path) =>
      path.includes('/events/') ? { status: 200, body: { wait: { id: 'hw_4', timeout_s: 5 } } } : { status: 200, body: { decision: { kind: 'permission', behavior: 'allow' } } },
    );
    try {
      expect(await hook('Stop', none.url, tokenFile(), STOP)).toMatchObject({ code: 0, out: '' });
      expect(await hook('Stop', wrong.url, tokenFile(), STOP)).toMatchObject({ code: 0, out: '' });
    } finally {
      await close(none.server);
      await close(wrong.server);
    }
  });
});
