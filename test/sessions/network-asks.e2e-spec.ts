import { join } from 'node:path';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { TestApp } from '../support/test-app';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

/**
 * A sandboxed worker's network asks over HTTP, as its launcher brings them: the test plays the launcher (a process
 * outside the sandbox holding the worker's credential), each session runs a real command worker.
 */

type Session = { id: string; alias: string; pid: number };
type Answer = { allow: boolean; reason: string | null };

function calls(t: TestApp, cwd: () => string, reaper: WorkerReaper) {
  const start = async (body: Record<string, unknown> = {}): Promise<Session> => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd(), command: process.execPath, args: [join(WORKERS, 'quiet.js')], ...body } });
    expect(res.statusCode).toBe(201);
    reaper.track(res.json().pid);
    return res.json();
  };
  /** The launcher's call, over a real connection (so that closing it is seen), with the worker's credential. */
  const ask = (s: Session, body: unknown, opts: { as?: Session; signal?: AbortSignal } = {}) =>
    fetch(`${t.url}/api/v1/coding-sessions/${s.id}/network-asks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...t.auth({ worker: (opts.as ?? s).id }) },
      body: JSON.stringify(body),
      signal: opts.signal,
    });
  const answer = async (s: Session, body: unknown): Promise<Answer> => {
    const res = await ask(s, body);
    expect(res.status).toBe(200);
    return (await res.json()) as Answer;
  };
  const detail = async (s: Session) => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${s.id}` })).json();
  /** The session's pending Network request, once it is raised. */
  const pendingNetwork = (s: Session) =>
    waitFor(async () => {
      const d = await detail(s);
      return d.state === 'pending_authorization' && d.pending?.tool === 'Network' ? (d.pending as { request_id: string; input: { host: string; port: number } }) : undefined;
    }, { what: `a Network request on ${s.alias}` });
  const permission = (s: Session, payload: object) => t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/permission`, payload });
  const networkEvents = async (s: Session) =>
    (await t.app.get<Journal>(JOURNAL).readStream(`session-${s.id}`)).filter((e) => e.type.startsWith('session.network_') || e.type.startsWith('session.permission_'));
  return { start, ask, answer, detail, pendingNetwork, permission, networkEvents };
}

describe('network asks over HTTP', () => {
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-net-cwd-');
  const t = useTestApp({ BRAINSTEM_SANDBOX_ASK_WAIT_S: '600', BRAINSTEM_SANDBOX: 'required' }, { listen: true, beforeClose: () => reaper.killAll() });
  afterAll(() => cwd.remove());
  const c = calls(t, () => cwd.path, reaper);

  it('holds the ask as a Network request until the user allows it, then answers allow; the detail lists it', async () => {
    const s = await c.start();
    const asked = c.answer(s, { host: 'example.org', port: 8443 });
    const pending = await c.pendingNetwork(s);
    expect(pending.input).toEqual({ host: 'example.org', port: 8443 });
    expect((await c.permission(s, { decision: 'allow', request_id: pending.request_id })).statusCode).toBe(200);
    expect(await asked).toEqual({ allow: true, reason: null });
    const d = await c.detail(s);
    expect(d.state).toBe('working');
    expect(d.network).toEqual([
      { kind: 'decided', at: expect.any(String), host: 'example.org', port: 8443, decision: 'allow', by: 'user', reason: null, request_id: pending.request_id, scope: 'once' },
    ]);
    // Once: the next connection to it is asked again.
    const again = c.answer(s, { host: 'example.org', port: 8443 });
    const next = await c.pendingNetwork(s);
    expect(next.request_id).not.toBe(pending.request_id);
    await c.permission(s, { decision: 'deny', reason: 'enough' });
    expect(await again).toEqual({ allow: false, reason: 'enough' });
  });

  it('refuses the brain\'s allow (403 network_allow_needs_user) and takes its deny', async () => {
    const s = await c.start();
    const asked = c.answer(s, { host: 'example.net', port: 443 });
    const { request_id } = await c.pendingNetwork(s);
    const brain = (decision: string, reason?: string) =>
      t.rawInject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/resolve_permission', payload: { session: s.id, request_id, decision, ...(reason ? { reason } : {}) }, headers: t.auth('main_brain') });
    const allowed = await brain('allow');
    expect(allowed.statusCode).toBe(403);
    expect(allowed.json()).toMatchObject({ code: 'network_allow_needs_user', message: expect.stringMatching(/only the person may allow/) });
    expect((await c.detail(s)).pending).toMatchObject({ request_id });
    expect((await brain('deny', 'not for this task')).statusCode).toBe(200);
    expect(await asked).toEqual({ allow: false, reason: 'not for this task' });
    expect((await c.networkEvents(s)).map((e) => [e.type, e.meta.actor])).toEqual([
      ['session.permission_requested', 'worker'],
      ['session.permission_resolved', 'main_brain'],
      ['session.network_decided', 'main_brain'],
    ]);
    expect((await c.detail(s)).network[0]).toMatchObject({ decision: 'deny', by: 'brain', request_id });
  });

  it('with scope session, lets the next connection to that host:port through without a request', async () => {
    const s = await c.start();
    const asked = c.answer(s, { host: 'api.example.com', port: 443 });
    const { request_id } = await c.pendingNetwork(s);
    expect((await c.permission(s, { decision: 'allow', request_id, scope: 'session' })).statusCode).toBe(200);
    expect(await asked).toEqual({ allow: true, reason: null });
    const before = (await c.networkEvents(s)).length;
    expect(await c.answer(s, { host: 'API.example.com', port: 443 })).toEqual({ allow: true, reason: null });
    const added = (await c.networkEvents(s)).slice(before);
    expect(added.map((e) => [e.type, (e.data as { by: string }).by])).toEqual([['session.network_decided', 'session']]);
  });

  it('refuses a scope on a request that is not a Network one, and a widening scope on a deny (400)', async () => {
    const s = await c.start();
    const signal = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/signals`, payload: { type: 'permission_request', tool: 'Edit', input: { file_path: 'a.ts' } } });
    expect(signal.statusCode).toBe(200);
    const scoped = await c.permission(s, { decision: 'allow', scope: 'session' });
    expect(scoped.statusCode).toBe(400);
    expect(scoped.json().message).toMatch(/^scope: only a Network request takes a scope/);
    expect((await c.permission(s, { decision: 'allow', scope: 'everywhere' })).statusCode).toBe(400);
    const n = await c.start();
    const asked = c.answer(n, { host: 'example.org', port: 80 });
    await c.pendingNetwork(n);
    expect((await c.permission(n, { decision: 'deny', scope: 'profile' })).json().message).toMatch(/^scope: profile widens an allow/);
    await c.permission(n, { decision: 'deny' });
    expect((await asked).allow).toBe(false);
  });

  it('ends the wait when the session exits: deny, journaled as by the exit', async () => {
    const s = await c.start();
    const asked = c.answer(s, { host: 'example.org', port: 443 });
    await c.pendingNetwork(s);
    expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/stop`, payload: { grace_ms: 0 } })).statusCode).toBe(200);
    expect(await asked).toEqual({ allow: false, reason: 'the session exited before the request was answered' });
    expect((await c.detail(s)).network).toEqual([expect.objectContaining({ decision: 'deny', by: 'exited' })]);
  });

  it('ends the wait when the launcher goes away: the request is denied and the session works again', async () => {
    const s = await c.start();
    const gone = new AbortController();
    const asked = c.ask(s, { host: 'example.org', port: 443 }, { signal: gone.signal }).catch((e: unknown) => e);
    const { request_id } = await c.pendingNetwork(s);
    gone.abort();
    expect(await asked).toMatchObject({ name: 'AbortError' });
    const d = await waitFor(async () => {
      const now = await c.detail(s);
      return now.state === 'working' ? now : undefined;
    }, { what: 'the abandoned request to be denied' });
    expect(d.network).toEqual([expect.objectContaining({ decision: 'deny', by: 'abandoned', request_id })]);
  });

  it('lets Bash run unasked in a sandboxed session (sandbox.auto_allow_bash), journaled by the sandbox', async () => {
    const s = await c.start();
    expect((await c.detail(s)).sandbox.on).toBe(true);
    const res = await t.rawInject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/signals`, payload: { type: 'permission_request', tool: 'Bash', input: { command: 'npm test' } }, headers: t.auth({ worker: s.id }) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ state: 'working', pending: null });
    expect((await c.networkEvents(s)).map((e) => [e.type, (e.data as { by?: string; decision: string }).by, (e.data as { decision: string }).decision])).toEqual([['session.permission_resolved', 'sandbox', 'allow']]);
  });

  it('journals a refusal srt made on its own, and lists it', async () => {
    const s = await c.start();
    const res = await t.rawInject({
      method: 'POST',
      url: `/api/v1/coding-sessions/${s.id}/network-refusals`,
      payload: { host: '169.254.169.254', port: 80, reason: 'host is on the deny list' },
      headers: t.auth({ worker: s.id }),
    });
    expect(res.statusCode).toBe(200);
    expect((await c.detail(s)).network).toEqual([{ kind: 'refused', at: expect.any(String), host: '169.254.169.254', port: 80, reason: 'host is on the deny list' }]);
  });

  describe('who may call, and what', () => {
    let s: Session;
    let other: Session;
    beforeAll(async () => {
      s = await c.start();
      other = await c.start();
    });

    const bad: [string, unknown, RegExp][] = [
      ['a body that is not an object', ['example.org', 443], /^body: must be a JSON object/],
      ['a missing host', { port: 443 }, /^host: /],
      ['a host over 253 characters', { host: `${'a'.repeat(250)}.com`, port: 443 }, /^host: must be at most 253 characters/],
      ['a host with a control character', { host: 'evil.com\u0000.example.org', port: 443 }, /^host: must not contain control characters/],
      ['a bracketed IPv6 host', { host: '[::1]', port: 443 }, /^host: must be a hostname, an IPv4 address or an IPv6 address without brackets/],
      ['a URL for a host', { host: 'http://example.org', port: 443 }, /^host: must be a hostname/],
      ['a port of 0', { host: 'example.org', port: 0 }, /port/],
      ['a port past 65535', { host: 'example.org', port: 65536 }, /port/],
      ['a port that is not an integer', { host: 'example.org', port: 44.3 }, /port/],
      ['a port as text', { host: 'example.org', port: '443' }, /port/],
      ['an unknown field', { host: 'example.org', port: 443, colour: 'red' }, /colour/],
    ];

    it.each(bad)('answers 400 to %s, journaling nothing', async (_name, body, message) => {
      const journal = t.app.get<Journal>(JOURNAL);
      const before = journal.head().seq;
      const res = await c.ask(s, body);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(message) });
      expect(journal.head().seq).toBe(before);
    });

    it('answers 400 to a refusal report without a reason', async () => {
      const res = await t.rawInject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/network-refusals`, payload: { host: 'example.org', port: 1 }, headers: t.auth({ worker: s.id }) });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toMatch(/reason/);
    });

    it('answers 403 to another session\'s worker, the user and the brain', async () => {
      const body = { host: 'example.org', port: 443 };
      const res = await c.ask(s, body, { as: other });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'permission_denied' });
      for (const headers of [t.auth('user'), t.auth('main_brain')]) {
        for (const path of ['network-asks', 'network-refusals']) {
          const r = await t.rawInject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/${path}`, payload: { ...body, reason: 'r' }, headers });
          expect({ path, status: r.statusCode, code: r.json().code }).toEqual({ path, status: 403, code: 'permission_denied' });
        }
      }
      expect((await c.detail(s)).network).toEqual([]);
    });
  });
});

describe('network asks nobody answers; Bash outside a sandbox', () => {
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-net-cwd-');
  const t = useTestApp({ BRAINSTEM_SANDBOX_ASK_WAIT_S: '1', BRAINSTEM_SANDBOX: 'off' }, { listen: true, beforeClose: () => reaper.killAll() });
  afterAll(() => cwd.remove());
  const c = calls(t, () => cwd.path, reaper);

  it('answers deny once BRAINSTEM_SANDBOX_ASK_WAIT_S passes, saying it timed out, and the session works again', async () => {
    const s = await c.start();
    const answer = await c.answer(s, { host: 'slow.example.org', port: 443 });
    expect(answer).toEqual({ allow: false, reason: 'no answer within 1 s (BRAINSTEM_SANDBOX_ASK_WAIT_S): denied' });
    const d = await c.detail(s);
    expect(d.state).toBe('working');
    expect(d.network).toEqual([expect.objectContaining({ decision: 'deny', by: 'timeout' })]);
    expect((await c.networkEvents(s)).map((e) => e.type)).toEqual(['session.permission_requested', 'session.permission_resolved', 'session.network_decided']);
  });

  it('asks about Bash outside a sandbox: auto_allow_bash never applies there', async () => {
    const s = await c.start();
    expect((await c.detail(s)).sandbox.on).toBe(false);
    const res = await t.rawInject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/signals`, payload: { type: 'permission_request', tool: 'Bash', input: { command: 'npm test' } }, headers: t.auth({ worker: s.id }) });
    expect(res.json()).toMatchObject({ state: 'pending_authorization', pending: { tool: 'Bash' } });
  });
});
