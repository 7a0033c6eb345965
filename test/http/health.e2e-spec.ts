import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { TestApp, startTestApp } from '../support/test-app';

describe('GET /api/v1/health: the liveness check, open to monitors and probes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('Given no credential, When a probe asks, Then it answers 200 {status: "ok"} and says nothing more', async () => {
    const res = await t.rawInject({ method: 'GET', url: '/api/v1/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
    expect((await t.rawInject({ method: 'HEAD', url: '/api/v1/health' })).statusCode).toBe(200);
  });

  it('Given any principal’s credential, When it asks, Then it answers the same', async () => {
    for (const principal of ['user', 'main_brain', { worker: 'cs_any' }] as const) {
      const res = await t.rawInject({ method: 'GET', url: '/api/v1/health', headers: t.auth(principal) });
      expect({ principal, status: res.statusCode, body: res.json() }).toEqual({ principal, status: 200, body: { status: 'ok' } });
    }
  });

  it('Given a foreign Host or Origin, When it asks without a credential, Then the Host and Origin checks still refuse it', async () => {
    const host = await t.rawInject({ method: 'GET', url: '/api/v1/health', headers: { host: 'attacker.example' } });
    expect({ status: host.statusCode, code: host.json().code }).toEqual({ status: 403, code: 'host_not_allowed' });
    const origin = await t.rawInject({ method: 'GET', url: '/api/v1/health', headers: { origin: 'https://attacker.example' } });
    expect({ status: origin.statusCode, code: origin.json().code }).toEqual({ status: 403, code: 'origin_not_allowed' });
  });

  it('Given a wrong credential, When it is sent along, Then it is still checked (401)', async () => {
    const res = await t.rawInject({ method: 'GET', url: '/api/v1/health', headers: { authorization: 'Bearer wrong' } });
    expect(res.statusCode).toBe(401);
  });

  it('Given the open route, When anything beside it is asked without a credential, Then it is refused (only GET and HEAD of that path are open)', async () => {
    for (const [method, url] of [
      ['POST', '/api/v1/health'],
      ['DELETE', '/api/v1/health'],
      ['GET', '/api/v1/health/'],
      ['GET', '/api/v1/healthz'],
      ['GET', '/api/v1/ready'],
    ] as const) {
      const res = await t.rawInject({ method, url });
      expect({ method, url, status: res.statusCode }).toEqual({ method, url, status: 401 });
    }
  });
});

describe('GET /api/v1/ready: what this node stands on, for the user', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('Given the user token, When asked, Then it reports the journal head, the lease this node holds and the brain', async () => {
    const journal = t.app.get<Journal>(JOURNAL);
    await journal.append('ready-test', [{ type: 'test.tick', data: {} }]);
    const res = await t.inject({ method: 'GET', url: '/api/v1/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      journal: { head_seq: journal.head().seq, open: true },
      // The embedded journal's node holds the lease for ever, at term 1.
      lease: { node: t.config.node.id, role: 'leader', term: 1 },
      // The test apps publish rounds for a brain the user brings (stream): Brainstem hosts none and holds no connection.
      brain: { driver: 'stream', hosted: false, runtime: null, connected: null },
      // The test apps run workers unsandboxed (test/support/test-config.ts), and say so.
      sandbox: { mode: 'off', workers_sandboxed: false, missing: [], reason: 'BRAINSTEM_SANDBOX is off' },
    });
    expect(res.json().journal.head_seq).toBeGreaterThan(0);
  });

  it('Given no credential, or the brain’s or a worker’s, When asked, Then it is refused: the detail is the user’s', async () => {
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/ready' })).statusCode).toBe(401);
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/ready', headers: t.auth('main_brain') })).statusCode).toBe(403);
    expect((await t.rawInject({ method: 'GET', url: '/api/v1/ready', headers: t.auth({ worker: 'cs_any' }) })).statusCode).toBe(403);
  });

  it('Given a webhook brain, When asked, Then it names that driver', async () => {
    const webhook = await startTestApp({ BRAINSTEM_MAIN_BRAIN_DRIVER: 'webhook', BRAINSTEM_MAIN_BRAIN_WEBHOOK_URL: 'http://127.0.0.1:9/rounds' });
    try {
      const res = await webhook.inject({ method: 'GET', url: '/api/v1/ready' });
      expect(res.json().brain).toEqual({ driver: 'webhook', hosted: false, runtime: null, connected: null });
    } finally {
      await webhook.close();
    }
  });
});
