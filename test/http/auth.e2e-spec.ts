import { readFileSync, readdirSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Credentials } from '../../src/auth/credentials';
import { startTestApp } from '../support/test-app';
import { useTestApp } from '../support/use-test-app';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WORKERS, WorkerReaper } from '../support/workers';

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A request over a real socket with exactly these headers (fetch would not let a test set Host). */
function raw(url: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

function mcpCall(name: string, args: Record<string, unknown>, id = 2) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

describe('Host and Origin checks (DNS rebinding, cross-site pages)', () => {
  const t = useTestApp({ BRAINSTEM_ALLOWED_HOSTS: 'brainstem.test, proxy.test:8443' }, { listen: true });
  let port: string;
  beforeAll(() => {
    port = new URL(t.url).port;
  });

  it.each(['/api/v1/health', '/api/v1/agent-profiles', '/mcp'])('refuses a foreign Host on %s with 403 before any handler, even with the user token', async (path) => {
    const res = await raw(t.url, path, { host: `attacker.example:${port}`, ...t.auth(), ...MCP_HEADERS }, path === '/mcp' ? INITIALIZE : undefined);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ statusCode: 403, code: 'host_not_allowed' });
  });

  it('answers the loopback names and the listed hosts on our port only', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `brainstem.test:${port}`, 'proxy.test:8443']) {
      expect({ host, status: (await raw(t.url, '/api/v1/health', { host, ...t.auth() })).status }).toEqual({ host, status: 200 });
    }
    for (const host of ['localhost:1', `evil.localhost:${port}`, `127.0.0.1.nip.io:${port}`, 'proxy.test:8444', 'a b']) {
      expect({ host, status: (await raw(t.url, '/api/v1/health', { host, ...t.auth() })).status }).toEqual({ host, status: 403 });
    }
  });

  it("refuses a browser request whose Origin is another site, on REST and on /mcp (the SDK's initialize included)", async () => {
    for (const origin of ['http://attacker.example', 'null', `http://localhost:${Number(port) + 1}`, `https://localhost:${port}`]) {
      const rest = await raw(t.url, '/api/v1/coding-sessions', { origin, ...t.auth(), 'content-type': 'application/json' }, { cwd: '/tmp', command: 'true' });
      expect({ origin, status: rest.status, code: JSON.parse(rest.body).code }).toEqual({ origin, status: 403, code: 'origin_not_allowed' });
      const mcp = await raw(t.url, '/mcp', { origin, ...t.auth(), ...MCP_HEADERS }, INITIALIZE);
      expect({ origin, status: mcp.status }).toEqual({ origin, status: 403 });
    }
    const own = await raw(t.url, '/mcp', { origin: `http://localhost:${port}`, ...t.auth(), ...MCP_HEADERS }, INITIALIZE);
    expect(own.status).toBe(200);
    // A TLS proxy listed as host:port: its https origin passes our check and the SDK's alike.
    const proxied = await raw(t.url, '/mcp', { host: 'proxy.test:8443', origin: 'https://proxy.test:8443', ...t.auth(), ...MCP_HEADERS }, INITIALIZE);
    expect(proxied.status).toBe(200);
    expect(JSON.parse(own.body).result.serverInfo.name).toBe('brainstem');
  });
});

describe('no anonymous door', () => {
  const t = useTestApp({}, { listen: true });

  it.each([
    ['GET', '/api/v1/ready'],
    ['GET', '/api/v1/coding-sessions'],
    ['POST', '/api/v1/coding-sessions'],
    ['GET', '/api/v1/journal/events'],
    ['POST', '/api/v1/session-os/main-brain/tools/list_sessions'],
    ['POST', '/mcp'],
  ])('%s %s without a credential, or with a wrong one, is 401', async (method, url) => {
    const payload = url === '/mcp' ? INITIALIZE : method === 'POST' ? { cwd: '/tmp', command: 'true' } : undefined;
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: `Basic ${t.token}` }, { authorization: `Bearer bsw_cs_x_forged` }]) {
      const res = await t.rawInject({ method: method as 'GET' | 'POST', url, payload, headers: { ...headers, ...(url === '/mcp' ? MCP_HEADERS : {}) } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 'unauthorized' });
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('generates the user token at first start into a file only its owner can read, and it works', async () => {
    const dir = tempDir('brainstem-token-');
    try {
      const app = await startTestApp({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_API_TOKEN: '' });
      try {
        const path = join(dir.path, 'api-token');
        expect(statSync(path).mode & 0o777).toBe(0o600);
        expect(statSync(join(dir.path, 'brain-token')).mode & 0o777).toBe(0o600);
        expect(statSync(join(dir.path, 'worker-key')).mode & 0o777).toBe(0o600);
        const token = readFileSync(path, 'utf8').trim();
        expect(token).toMatch(/^bsu_[A-Za-z0-9_-]{43}$/);
        expect(app.app.get(Credentials).userTokenSource()).toBe(path);
        expect((await app.rawInject({ method: 'GET', url: '/api/v1/health', headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200);
      } finally {
        await app.close();
      }
      // The same token after a restart: a client configured once keeps working.
      const again = await startTestApp({ BRAINSTEM_JOURNAL_DIR: dir.path, BRAINSTEM_API_TOKEN: '' });
      try {
        const token = readFileSync(join(dir.path, 'api-token'), 'utf8').trim();
        expect((await again.rawInject({ method: 'GET', url: '/api/v1/auth/whoami', headers: { authorization: `Bearer ${token}` } })).json()).toEqual({ principal: { kind: 'user' } });
      } finally {
        await again.close();
      }
    } finally {
      dir.remove();
    }
  });

  describe('given a user token the service generated', () => {
    const app = useTestApp({ BRAINSTEM_API_TOKEN: '' });

    it('rotates the user and the brain token: the old one stops working at once, the file holds the new one', async () => {
      const old = readFileSync(join(app.config.journal.dir, 'api-token'), 'utf8').trim();
      const oldBrain = app.app.get(Credentials).brainToken();
      const asOld = { authorization: `Bearer ${old}` };
      const rotated = await app.rawInject({ method: 'POST', url: '/api/v1/auth/rotate', payload: { principal: 'user' }, headers: asOld });
      expect(rotated.statusCode).toBe(200);
      const { token, path } = rotated.json() as { token: string; path: string };
      expect(path).toBe(join(app.config.journal.dir, 'api-token'));
      expect(readFileSync(path, 'utf8').trim()).toBe(token);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect((await app.rawInject({ method: 'GET', url: '/api/v1/health', headers: asOld })).statusCode).toBe(401);
      const asNew = { authorization: `Bearer ${token}` };
      const brain = await app.rawInject({ method: 'POST', url: '/api/v1/auth/rotate', payload: { principal: 'main_brain' }, headers: asNew });
      expect(brain.statusCode).toBe(200);
      expect((await app.rawInject({ method: 'GET', url: '/api/v1/session-os/main-brain/tools', headers: { authorization: `Bearer ${oldBrain}` } })).statusCode).toBe(401);
      expect((await app.rawInject({ method: 'GET', url: '/api/v1/session-os/main-brain/tools', headers: { authorization: `Bearer ${brain.json().token}` } })).statusCode).toBe(200);
      const bad = await app.rawInject({ method: 'POST', url: '/api/v1/auth/rotate', payload: { principal: 'worker' }, headers: asNew });
      expect(bad.statusCode).toBe(400);
    });
  });

  it('a user token set by BRAINSTEM_API_TOKEN is rotated by changing the variable: 409, nothing written', async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/auth/rotate', payload: { principal: 'user' } });
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toContain('BRAINSTEM_API_TOKEN');
    expect(readdirSync(t.config.journal.dir)).not.toContain('api-token');
  });
});

describe('BRAINSTEM_AUTH=off (explicit, loopback only)', () => {
  const t = useTestApp({ BRAINSTEM_AUTH: 'off' });

  it('lets a request without a credential act as the user, still checks Host, and still refuses a wrong credential', async () => {
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/auth/whoami' })).json()).toEqual({ principal: { kind: 'user' } });
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/ready' })).statusCode).toBe(200);
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/health' })).json()).toEqual({ status: 'ok' });
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/health', headers: { host: 'attacker.example' } })).statusCode).toBe(403);
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/health', headers: { authorization: 'Bearer wrong' } })).statusCode).toBe(401);
  });
});

describe('one credential per principal', () => {
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-auth-cwd-');
  const PATH = `${FAKE_BIN}:${process.env.PATH}`;
  const t = useTestApp({}, { listen: true, beforeClose: () => reaper.killAll() });
  afterAll(() => cwd.remove());

  async function startWorker(body: Record<string, unknown>): Promise<{ id: string; alias: string; pid: number }> {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, ...body } });
    expect(res.statusCode).toBe(201);
    reaper.track(res.json().pid);
    return res.json();
  }

  const quiet = () => startWorker({ command: process.execPath, args: [join(WORKERS, 'quiet.js')] });

  it('the main brain calls main-brain tools and reads rounds, and nothing of the user', async () => {
    const brain = t.auth('main_brain');
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/auth/whoami', headers: brain })).json()).toEqual({ principal: { kind: 'main_brain' } });
    expect((await t.rawInject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/list_sessions', payload: {}, headers: brain })).statusCode).toBe(200);
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/session-os/main-brain/rounds', headers: brain })).statusCode).toBe(200);
    for (const [method, url] of [
      ['POST', '/api/v1/coding-sessions'],
      ['GET', '/api/v1/coding-sessions'],
      ['GET', '/api/v1/agent-profiles'],
      ['POST', '/api/v1/session-os/main-brain/autonomous'],
      ['POST', '/api/v1/session-os/main-brain/messages'],
      ['GET', '/api/v1/journal/events'],
      ['POST', '/api/v1/auth/rotate'],
    ] as const) {
      const res = await t.rawInject({ method, url, payload: method === 'POST' ? {} : undefined, headers: brain });
      expect({ url, status: res.statusCode, code: res.json().code }).toEqual({ url, status: 403, code: 'permission_denied' });
    }
    const listed = await t.rawInject({ method: 'POST', url: '/mcp', payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { ...brain, ...MCP_HEADERS } });
    expect(listed.json().result.tools.map((x: { name: string }) => x.name)).toEqual(expect.arrayContaining(['resolve_permission', 'enable_supervision']));
  });

  it('a worker signals its own session only, and cannot resolve a permission, call a brain tool or read user routes', async () => {
    const own = await quiet();
    const other = await quiet();
    const worker = t.auth({ worker: own.id });
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/auth/whoami', headers: worker })).json()).toEqual({ principal: { kind: 'worker', session_id: own.id } });
    const signal = { type: 'report_progress', status: 'working', message: 'hi' };
    expect((await t.rawInject({ method: 'POST', url: `/api/v1/coding-sessions/${own.alias}/signals`, payload: signal, headers: worker })).statusCode).toBe(200);
    for (const target of [other.id, other.alias, 'cs_does_not_exist']) {
      const res = await t.rawInject({ method: 'POST', url: `/api/v1/coding-sessions/${target}/signals`, payload: signal, headers: worker });
      expect({ target, status: res.statusCode }).toEqual({ target, status: 403 });
    }
    for (const [method, url, payload] of [
      ['POST', `/api/v1/coding-sessions/${own.id}/permission`, { decision: 'allow' }],
      ['POST', '/api/v1/session-os/main-brain/tools/resolve_permission', { session: own.id, decision: 'allow' }],
      ['GET', '/api/v1/session-os/main-brain/tools', undefined],
      ['GET', `/api/v1/coding-sessions/${own.id}`, undefined],
      ['POST', `/api/v1/coding-sessions/${own.id}/messages`, { text: 'x' }],
      ['GET', '/api/v1/session-os/main-brain/rounds', undefined],
    ] as const) {
      const res = await t.rawInject({ method, url, payload, headers: worker });
      expect({ url, status: res.statusCode }).toEqual({ url, status: 403 });
    }
    const asMcp = (body: unknown, extra: Record<string, string> = {}) => t.rawInject({ method: 'POST', url: '/mcp', payload: body as object, headers: { ...worker, ...MCP_HEADERS, ...extra } });
    const tools = (await asMcp({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).json().result.tools.map((x: { name: string }) => x.name);
    expect(tools).toContain('report_progress');
    expect(tools).not.toContain('resolve_permission');
    const call = (await asMcp(mcpCall('resolve_permission', { session: own.id, decision: 'allow' }))).json().result;
    expect(call).toMatchObject({ isError: true });
    expect(call.content[0].text).toContain('not_found');
    // The session header is a hint that must agree with the credential.
    const lying = await asMcp(mcpCall('report_progress', { status: 'working' }), { 'x-brainstem-session': other.id });
    expect(lying.statusCode).toBe(403);
  });

  it('the user token with a session header does not make the caller a worker (identity is the credential)', async () => {
    const s = await quiet();
    const res = await t.inject({ method: 'POST', url: '/mcp', payload: mcpCall('report_progress', { status: 'working' }), headers: { ...MCP_HEADERS, 'x-brainstem-session': s.id } });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('permission_denied');
  });

  it('a worker credential is revoked when its session exits', async () => {
    const s = await quiet();
    const worker = t.auth({ worker: s.id });
    expect((await t.rawInject({ method: 'POST', url: '/mcp', payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { ...worker, ...MCP_HEADERS } })).statusCode).toBe(200);
    expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/stop`, payload: {} })).statusCode).toBe(200);
    await waitFor(async () => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${s.id}` })).json().state === 'exited', { what: 'the worker to exit' });
    const mcp = await t.rawInject({ method: 'POST', url: '/mcp', payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { ...worker, ...MCP_HEADERS } });
    expect(mcp.statusCode).toBe(401);
    const rest = await t.rawInject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/signals`, payload: { type: 'report_progress', status: 'working' }, headers: worker });
    expect(rest.statusCode).toBe(403);
  });

  it('a worker that inspects its whole environment and every file it was given finds no credential that approves a permission or calls a brain tool', async () => {
    // A claude-code worker: a long-lived process, with the generated MCP config and settings files, asking a permission.
    const s = await startWorker({ runtime: 'claude-code', env: { PATH }, prompt: 'use a tool' });
    await waitFor(async () => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${s.id}` })).json().state === 'pending_authorization', {
      what: 'the permission request',
    });
    const environ = readFileSync(`/proc/${s.pid}/environ`, 'utf8').split('\0').filter(Boolean);
    const configDir = join(t.config.journal.dir, 'session-config', s.id);
    const files = listFiles(configDir).map((f) => readFileSync(f, 'utf8'));
    expect(files.join('\n')).toContain('Bearer ${BRAINSTEM_TOKEN:-}');
    const everything = [...environ, ...files].join('\n');
    const credentials = t.app.get(Credentials);
    expect(everything).not.toContain(t.token);
    expect(everything).not.toContain(credentials.brainToken());
    expect(environ).toContain(`BRAINSTEM_TOKEN=${credentials.workerToken(s.id)}`);

    // Every value and every word it could read, tried as a credential against everything that approves or acts as the brain.
    const candidates = new Set<string>();
    for (const text of [...environ, ...files]) {
      const value = text.includes('=') ? text.slice(text.indexOf('=') + 1) : text;
      candidates.add(value);
      for (const word of text.split(/[\s"'`,;:{}[\]()=]+/)) if (word) candidates.add(word);
    }
    expect(candidates.size).toBeGreaterThan(20);
    const approvals: string[] = [];
    for (const candidate of candidates) {
      if (/[^\x21-\x7e]/.test(candidate)) continue; // not sendable as a header value
      const headers = { authorization: `Bearer ${candidate}` };
      const attempts = [
        await t.rawInject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/permission`, payload: { decision: 'allow' }, headers }),
        await t.rawInject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/resolve_permission', payload: { session: s.id, decision: 'allow' }, headers }),
        await t.rawInject({ method: 'POST', url: '/mcp', payload: mcpCall('resolve_permission', { session: s.id, decision: 'allow' }), headers: { ...headers, ...MCP_HEADERS } }),
      ];
      for (const res of attempts) {
        if (res.statusCode === 200 && !res.json().result?.isError) approvals.push(`${candidate.slice(0, 12)}… → ${res.statusCode}`);
      }
    }
    expect(approvals).toEqual([]);
    const status = (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${s.id}` })).json();
    expect(status.state).toBe('pending_authorization');
  });
});

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name)) : [join(dir, e.name)]));
}
