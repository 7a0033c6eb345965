import { readFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { Server, createServer } from 'node:http';
import { join } from 'node:path';
import { sandboxAvailability } from '../../src/sandbox/sandbox-availability';
import { SessionStatus } from '../../src/sessions/session.status';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';

type Detail = SessionStatus;

/**
 * A sandboxed worker's connections, end to end: a real worker runs curl in bubblewrap, srt's proxy asks the launcher,
 * the launcher asks the service, the person answers. Two loopback servers: one the profile allows, one no rule decides.
 */
describe('a sandboxed worker asks for the network', () => {
  const cwd = tempDir('brainstem-net-cwd-');
  const servers: Server[] = [];
  let allowedPort = 0;
  let askedPort = 0;
  const listen = (text: string) =>
    new Promise<number>((resolve) => {
      const s = createServer((_req, res) => res.end(text)).listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port));
      servers.push(s);
    });

  const t = useTestApp({ BRAINSTEM_SANDBOX: 'required', BRAINSTEM_SANDBOX_ASK_WAIT_S: '3' }, { listen: true });
  beforeAll(async () => {
    expect(sandboxAvailability()).toMatchObject({ available: true });
    allowedPort = await listen('allowed-ok');
    askedPort = await listen('asked-ok');
  });
  afterAll(async () => {
    for (const s of servers) await new Promise((r) => s.close(r));
    cwd.remove();
  });

  const api = async <T>(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object): Promise<{ status: number; body: T }> => {
    const res = await t.inject({ method, url: `/api/v1${url}`, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json() as T };
  };
  const profile = async (name: string, network: { allow?: string[]; deny?: string[] }) => {
    const res = await api<{ id: string }>('POST', '/agent-profiles', { name, sandbox: { network } });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  /** A worker that fetches the allowed server, then the asked one through the proxy, writing what came back. */
  const worker = async (profileId: string, tag: string) => {
    const script = [
      `curl -s --max-time 60 http://127.0.0.1:${allowedPort}/ > ${tag}-allowed.txt 2>&1`,
      `curl -s --max-time 60 --noproxy '' -x "$HTTP_PROXY" -o ${tag}-asked.txt -w '%{http_code}' http://127.0.0.1:${askedPort}/ > ${tag}-code.txt 2>&1`,
      `echo done > ${tag}-done.txt`,
    ].join('; ');
    const res = await api<SessionStatus>('POST', '/coding-sessions', { cwd: cwd.path, profile_id: profileId, command: 'bash', args: ['-c', script] });
    expect(res.status).toBe(201);
    expect(res.body.sandbox.on).toBe(true);
    return res.body;
  };
  const file = (name: string) => {
    try {
      return readFileSync(join(cwd.path, name), 'utf8');
    } catch {
      return null;
    }
  };
  const done = (tag: string) => waitFor(() => file(`${tag}-done.txt`) !== null, { timeoutMs: 60_000, what: `worker ${tag} to finish` });
  const detail = async (id: string) => (await api<Detail>('GET', `/coding-sessions/${id}`)).body;
  const asking = (id: string) =>
    waitFor(async () => {
      const s = await detail(id);
      return s.pending?.kind === 'permission' ? s.pending : undefined;
    }, { timeoutMs: 60_000, what: `session ${id} to ask` });

  it("reaches the allowed host; the other becomes a Network request, and the person's allow lets it through", async () => {
    const id = await profile('net-allow', { allow: [`127.0.0.1:${allowedPort}`] });
    const s = await worker(id, 'a');
    const pending = await asking(s.id);
    expect(pending).toMatchObject({ tool: 'Network', input: { host: '127.0.0.1', port: askedPort } });
    expect((await detail(s.id)).state).toBe('pending_authorization');
    const answer = await api('POST', `/coding-sessions/${s.id}/permission`, { decision: 'allow', request_id: (pending as { request_id: string }).request_id });
    expect(answer.status).toBe(200);
    await done('a');
    expect(file('a-allowed.txt')).toBe('allowed-ok');
    expect(file('a-asked.txt')).toBe('asked-ok');
    expect((await detail(s.id)).network).toEqual(expect.arrayContaining([expect.objectContaining({ host: '127.0.0.1', port: askedPort, decision: 'allow', by: 'user' })]));
  });

  it("is refused when the person denies, and when nobody answers in time; both are journaled", async () => {
    const id = await profile('net-deny', { allow: [`127.0.0.1:${allowedPort}`] });
    const denied = await worker(id, 'd');
    const pending = (await asking(denied.id)) as { request_id: string };
    await api('POST', `/coding-sessions/${denied.id}/permission`, { decision: 'deny', request_id: pending.request_id, reason: 'not that one' });
    await done('d');
    expect(file('d-code.txt')).toBe('403');
    expect(file('d-asked.txt')).not.toBe('asked-ok');
    expect((await detail(denied.id)).network).toEqual(expect.arrayContaining([expect.objectContaining({ port: askedPort, decision: 'deny', by: 'user' })]));

    const unanswered = await worker(id, 't');
    await done('t');
    expect(file('t-code.txt')).toBe('403');
    expect((await detail(unanswered.id)).network).toEqual(expect.arrayContaining([expect.objectContaining({ port: askedPort, decision: 'deny', by: 'timeout' })]));
  });

  it("is refused on arrival, without asking, when the profile denies the host", async () => {
    const id = await profile('net-profile-deny', { allow: [`127.0.0.1:${allowedPort}`], deny: [`127.0.0.1:${askedPort}`] });
    const s = await worker(id, 'p');
    await done('p');
    expect(file('p-allowed.txt')).toBe('allowed-ok');
    expect(file('p-code.txt')).toBe('403');
    const d = await detail(s.id);
    expect(d.pending).toBeNull();
    await waitFor(async () => (await detail(s.id)).network.some((n) => n.port === askedPort && n.kind === 'refused'), { timeoutMs: 30_000, what: 'the refusal journaled' });
  });

  it('lets the next session through without asking once the person added the host to the profile', async () => {
    const id = await profile('net-add', { allow: [`127.0.0.1:${allowedPort}`] });
    const first = await worker(id, 'f');
    const pending = (await asking(first.id)) as { request_id: string };
    expect((await api('POST', `/coding-sessions/${first.id}/permission`, { decision: 'allow', request_id: pending.request_id, scope: 'profile' })).status).toBe(200);
    await done('f');
    expect(file('f-asked.txt')).toBe('asked-ok');
    const next = await worker(id, 'n');
    await done('n');
    expect(file('n-asked.txt')).toBe('asked-ok');
    expect((await detail(next.id)).network.filter((n) => n.kind === 'decided' && n.by === 'user')).toEqual([]);
  });
});
