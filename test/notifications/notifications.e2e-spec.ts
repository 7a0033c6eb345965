import { join } from 'node:path';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { HttpReceiver } from '../support/http-receiver';
import { TestPushService, TestSubscription } from '../support/push-service';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';

type Action = { label: string; url: string; method: string };
type WebhookBody = { kind: string; session: { id: string; alias: string; title: string; runtime: string } | null; title: string; text: string; url: string; actions: Action[] };
type NtfyBody = { topic: string; title: string; message: string; priority: number; click: string; actions: Array<{ action: string; label: string; url: string; method?: string }> };
type PushBody = { title: string; text: string; url: string; tag: string; actions: Array<{ action: string; label: string; url: string }> };
type Pending = { kind: string; request_id?: string } | null;
type Status = { id: string; alias: string; state: string; pid: number | null; pending: Pending; queued_permissions: Array<{ request_id: string }> };

/**
 * A permission request of a real worker reaches a webhook, ntfy and Web Push (a push service from npm, which decrypts
 * what it is sent), naming the session and the command; its action links answer that request once, and never another.
 */
describe('notifications, end to end over HTTP', () => {
  let t: TestApp;
  let push: TestPushService;
  let webhook: HttpReceiver;
  let ntfy: HttpReceiver;
  let device: TestSubscription;
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-notify-cwd-');

  beforeAll(async () => {
    push = await TestPushService.start();
    webhook = await HttpReceiver.start();
    ntfy = await HttpReceiver.start();
    t = await startTestApp(
      {
        BRAINSTEM_NOTIFY_WEBHOOK_URL: `${webhook.url}/hooks/brainstem`,
        BRAINSTEM_NOTIFY_NTFY_URL: ntfy.url,
        BRAINSTEM_NOTIFY_NTFY_TOPIC: 'brainstem-test',
        BRAINSTEM_NOTIFY_RATE_PER_MINUTE: '600',
      },
      { listen: true },
    );
    const key = (await get('/api/v1/notifications/push/key')).body as { public_key: string };
    device = await push.subscribe(key.public_key);
    const res = await http('POST', '/api/v1/notifications/push/subscriptions', { endpoint: device.endpoint, keys: device.keys, device: 'test phone' }, { ...t.auth(), origin: t.url });
    expect(res.status).toBe(201);
  });
  afterEach(() => reaper.killAll());
  afterAll(async () => {
    reaper.killAll();
    await t?.close();
    await Promise.all([push?.close(), webhook?.close(), ntfy?.close()]);
    cwd.remove();
  });

  async function http(method: string, path: string, body?: unknown, headers: Record<string, string> = { ...t.auth() }): Promise<{ status: number; body: unknown }> {
    const res = await fetch(path.startsWith('http') ? path : `${t.url}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? null : JSON.parse(text) };
  }
  const get = (path: string) => http('GET', path);
  const status = async (id: string) => (await get(`/api/v1/coding-sessions/${id}`)).body as Status;
  /** An action link is its own credential: it is used with no other. */
  const use = (url: string) => http('POST', url, undefined, {});

  async function startAsking(title: string, ...commands: string[]): Promise<Status> {
    return startAskingWith({}, title, ...commands);
  }

  async function startAskingWith(extra: { profile_id?: string }, title: string, ...commands: string[]): Promise<Status> {
    const res = await http('POST', '/api/v1/coding-sessions', { title, command: process.execPath, args: [join(WORKERS, 'asks-permission.js'), ...commands], cwd: cwd.path, ...extra });
    expect(res.status).toBe(201);
    const s = res.body as Status;
    reaper.track(s.pid);
    return waitFor(async () => {
      const now = await status(s.id);
      return now.pending?.kind === 'permission' && now.queued_permissions.length === commands.length - 1 ? now : undefined;
    }, { what: `${commands.length} permission request(s) of ${title}` });
  }

  const forSession = <T extends { title: string }>(bodies: T[], alias: string) => bodies.filter((b) => b.title.startsWith(`${alias} `) || b.title.startsWith(`${alias}:`));
  const webhookFor = (alias: string) => waitFor(() => forSession(webhook.received.map((r) => r.body as WebhookBody), alias)[0], { what: `the webhook for ${alias}` });
  const ntfyFor = (alias: string) => waitFor(() => forSession(ntfy.received.map((r) => r.body as NtfyBody), alias)[0], { what: `ntfy for ${alias}` });
  const pushFor = (alias: string) =>
    waitFor(async () => forSession((await push.messages(device.clientHash)).map((m) => JSON.parse(m) as PushBody), alias)[0], { what: `a push for ${alias}` });
  const journaled = async (type: string) => (await t.app.get<Journal>(JOURNAL).readStream('notifications')).filter((e) => e.type === type);

  it('a permission request reaches the webhook, ntfy and Web Push, naming the session and the command; its Allow link answers that request once and never again', async () => {
    // Given a worker that asks to run a command
    const s = await startAsking('Clean the build', 'make clean');
    const requestId = s.pending?.request_id as string;

    // Then the webhook gets the generic shape: the session, why, a link to its card, and the actions
    const hook = await webhookFor(s.alias);
    expect(hook).toMatchObject({ kind: 'permission', session: { id: s.id, alias: s.alias, title: 'Clean the build', runtime: 'command' } });
    expect(hook.text).toContain('make clean');
    expect(hook.text).toContain('Permission for Bash');
    expect(hook.url).toBe(`${t.url}/#/?session=${encodeURIComponent(s.id)}`);
    expect(hook.actions.map((a) => [a.label, a.method])).toEqual([['Allow', 'POST'], ['Deny', 'POST'], ['Open', 'GET']]);
    expect(webhook.received[0].path).toBe('/hooks/brainstem');

    // And ntfy gets its topic, a high priority, the card as the click and http buttons
    const n = await ntfyFor(s.alias);
    expect(n).toMatchObject({ topic: 'brainstem-test', priority: 4, click: hook.url });
    expect(n.message).toContain('make clean');
    expect(n.actions.map((a) => [a.action, a.label])).toEqual([['http', 'Allow'], ['http', 'Deny'], ['view', 'Open']]);

    // And the push service decrypts the pushed message to the same notification
    const p = await pushFor(s.alias);
    expect(p.title).toBe(`${s.alias} wants to use Bash`);
    expect(p.text).toContain('make clean');
    expect(p.text).toContain(`Session ${s.alias} · Clean the build · command`);
    expect(p.url).toBe(hook.url);
    expect(p.actions.map((a) => a.action)).toEqual(['allow', 'deny']);

    // Each device got links of its own
    const allow = p.actions[0].url;
    expect(new Set([allow, hook.actions[0].url, n.actions[0].url]).size).toBe(3);

    // When the pushed Allow link is used, it answers that very request
    const first = await use(allow);
    expect(first).toMatchObject({ status: 200 });
    expect(first.body).toMatchObject({ action: 'allow', target: { kind: 'permission', session_id: s.id, request_id: requestId }, done: true });
    expect((await status(s.id)).pending).toBeNull();
    const resolved = (await t.app.get<Journal>(JOURNAL).readStream(`session-${s.id}`)).filter((e) => e.type === 'session.permission_resolved');
    expect(resolved.map((e) => e.data)).toEqual([expect.objectContaining({ request_id: requestId, decision: 'allow' })]);

    // And a second use is refused, changes nothing, and is journaled
    const second = await use(allow);
    expect(second).toMatchObject({ status: 409, body: { code: 'action_used' } });
    const after = (await t.app.get<Journal>(JOURNAL).readStream(`session-${s.id}`)).filter((e) => e.type === 'session.permission_resolved');
    expect(after).toHaveLength(1);
    const used = await journaled('notification.action_used');
    const capability = used.find((e) => (e.data as { target: { request_id?: string } }).target.request_id === requestId);
    expect(capability?.data).toMatchObject({ action: 'allow', device: expect.stringMatching(/^ps_/) });
    expect((await journaled('notification.action_refused')).map((e) => e.data)).toContainEqual(expect.objectContaining({ reason: 'used', device: (capability?.data as { device: string }).device }));

    // And the same request's links on the other devices no longer act: it was answered
    const late = await use(hook.actions[1].url);
    expect(late).toMatchObject({ status: 409, body: { code: 'action_stale' } });
    expect(after).toHaveLength(1);
  });

  it("a link for a request answered meanwhile never answers the request that waits now", async () => {
    // Given two requests, the first one's link, and the first answered from the dashboard
    const s = await startAsking('Two commands', 'git status', 'git commit -m wip');
    const hook = await webhookFor(s.alias);
    const [first, second] = [s.pending?.request_id as string, s.queued_permissions[0].request_id];
    expect((await http('POST', `/api/v1/coding-sessions/${s.id}/permission`, { decision: 'deny', request_id: first })).status).toBe(200);
    expect((await status(s.id)).pending).toMatchObject({ request_id: second });

    // When the first request's Allow link is used
    const res = await use(hook.actions[0].url);

    // Then it is refused, the second request still waits, and the refusal is journaled
    expect(res).toMatchObject({ status: 409, body: { code: 'action_stale' } });
    expect((await status(s.id)).pending).toMatchObject({ kind: 'permission', request_id: second });
    expect((await journaled('notification.action_refused')).map((e) => (e.data as { reason: string }).reason)).toContain('stale');
  });

  it("a profile's deny still wins over an Allow link: refused, the request still waits, the outcome journaled", async () => {
    // Given a request that waits, and then a deny added to the session's profile (a request it matched on arrival
    // would have been denied then, and no link sent)
    const created = await http('POST', '/api/v1/agent-profiles', { name: 'Wipes Later Denied' });
    expect(created.status).toBe(201);
    const profileId = (created.body as { id: string }).id;
    const s = await startAskingWith({ profile_id: profileId }, 'Wipe it', 'rm -rf build');
    const hook = await webhookFor(s.alias);
    expect((await http('PATCH', `/api/v1/agent-profiles/${profileId}`, { permissions: { deny: ['Bash(rm -rf *)'] } })).status).toBe(200);
    expect(await use(hook.actions[0].url)).toMatchObject({ status: 403, body: { code: 'denied_by_profile' } });
    expect((await status(s.id)).pending).toMatchObject({ kind: 'permission', request_id: s.pending?.request_id });
    const done = (await journaled('notification.action_done')).map((e) => e.data as { outcome: { ok: boolean; code?: string } });
    expect(done.map((d) => d.outcome)).toContainEqual({ ok: false, code: 'denied_by_profile', message: expect.any(String) });
  });

  it('an expired link is refused (410), changes nothing, and is journaled', async () => {
    const s = await startAsking('Slow to answer', 'npm publish');
    const hook = await webhookFor(s.alias);
    // When the link is used after its 15 minutes (the service's clock moved on)
    const realNow = Date.now;
    const later = realNow() + 16 * 60_000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => later);
    let res: { status: number; body: unknown };
    try {
      res = await use(hook.actions[0].url);
    } finally {
      clock.mockRestore();
    }
    expect(res).toMatchObject({ status: 410, body: { code: 'action_expired' } });
    expect((await status(s.id)).pending).toMatchObject({ kind: 'permission', request_id: s.pending?.request_id });
    expect((await journaled('notification.action_refused')).map((e) => (e.data as { reason: string }).reason)).toContain('expired');
  });

  it('an action link is a credential for its own action only: forged ones are refused, and it opens no other route', async () => {
    const s = await startAsking('Credential check', 'ls');
    const hook = await webhookFor(s.alias);
    const link = hook.actions[0].url;
    const token = link.slice(link.lastIndexOf('/') + 1);
    // A link whose signature is not ours
    expect((await use(`${link.slice(0, -4)}AAAA`)).status).toBe(401);
    // The capability as a bearer token anywhere else
    for (const path of ['/api/v1/coding-sessions', `/api/v1/coding-sessions/${s.id}`, '/api/v1/notifications/rules', '/api/v1/auth/whoami']) {
      expect((await http('GET', path, undefined, { authorization: `Bearer ${token}` })).status).toBe(401);
    }
    // What it is, without acting (the page that asks before it POSTs reads this)
    const described = await http('GET', link, undefined, {});
    expect(described).toMatchObject({ status: 200, body: { action: 'allow', label: 'Allow', status: 'usable', session: { alias: s.alias } } });
    expect((await status(s.id)).pending).toMatchObject({ kind: 'permission' });
  });

  it("a gate confirmation reaches the channels with Confirm and Refuse; its Refuse link refuses that call once", async () => {
    // Given the main brain asking to stop a session, which the gate holds for the person
    const s = await startAsking('Keep me running', 'sleep 1');
    const asked = await http('POST', '/api/v1/session-os/main-brain/tools/stop_session', { session: s.alias }, t.auth('main_brain'));
    expect(asked).toMatchObject({ status: 200, body: { result: { status: 'waiting_for_user' } } });
    const confirmationId = (asked.body as { result: { confirmation_id: string } }).result.confirmation_id;
    const hook = await waitFor(() => webhook.received.map((r) => r.body as WebhookBody).find((b) => b.kind === 'confirmation' && b.url.endsWith(confirmationId)), { what: 'the confirmation' });
    expect(hook).toMatchObject({ session: null, title: 'The main brain waits for your confirmation (stop_session)' });
    expect(hook.actions.map((a) => a.label)).toEqual(['Confirm', 'Refuse', 'Open']);
    // When its Refuse link is used, the call is refused and the worker keeps running; a second use is refused
    expect(await use(hook.actions[1].url)).toMatchObject({ status: 200, body: { action: 'refuse', target: { kind: 'confirmation', confirmation_id: confirmationId } } });
    expect((await get(`/api/v1/session-os/main-brain/confirmations/${confirmationId}`)).body).toMatchObject({ status: 'refused', resolved_by: 'user' });
    expect((await status(s.id)).state).not.toBe('exited');
    expect(await use(hook.actions[1].url)).toMatchObject({ status: 409, body: { code: 'action_used' } });
    expect(await use(hook.actions[0].url)).toMatchObject({ status: 409, body: { code: 'action_stale' } });
  });

  it('removes a device the push service dropped, and goes on with the others', async () => {
    const key = (await get('/api/v1/notifications/push/key')).body as { public_key: string };
    const dropped = await push.subscribe(key.public_key);
    expect((await http('POST', '/api/v1/notifications/push/subscriptions', { endpoint: dropped.endpoint, keys: dropped.keys, device: 'old tablet' }, { ...t.auth(), origin: t.url })).status).toBe(201);
    await push.expire(dropped.clientHash);
    const s = await startAsking('After the tablet', 'true');
    await pushFor(s.alias);
    await waitFor(async () => {
      const devices = ((await get('/api/v1/notifications/push/subscriptions')).body as { devices: Array<{ device: string }> }).devices;
      return devices.every((d) => d.device !== 'old tablet') ? devices : undefined;
    }, { what: 'the dropped device removed' });
    expect((await journaled('notification.subscription_removed')).map((e) => e.data)).toContainEqual(expect.objectContaining({ reason: 'gone' }));
  });

  it('refuses a push subscription from another origin, or from no page at all', async () => {
    const body = { endpoint: device.endpoint.replace(/[^/]+$/, 'other'), keys: device.keys };
    expect(await http('POST', '/api/v1/notifications/push/subscriptions', body, { ...t.auth(), origin: 'https://evil.example' })).toMatchObject({
      status: 403,
      body: { code: 'origin_not_allowed' },
    });
    expect(await http('POST', '/api/v1/notifications/push/subscriptions', body, { ...t.auth() })).toMatchObject({ status: 403, body: { code: 'origin_not_allowed' } });
    expect(await http('POST', '/api/v1/notifications/push/subscriptions', { ...body, endpoint: 'http://push.example/x' }, { ...t.auth(), origin: t.url })).toMatchObject({
      status: 400,
      body: { code: 'invalid_input' },
    });
    const devices = (await get('/api/v1/notifications/push/subscriptions')).body as { devices: Array<{ device: string }> };
    expect(devices.devices.map((d) => d.device)).toEqual(['test phone']);
  });

  it('shows a failing channel as failing and retries it with backoff, without holding up the others', async () => {
    // Given the webhook's receiver failing
    webhook.status = 500;
    const s = await startAsking('While the webhook fails', 'make');
    // Then ntfy still gets it, and the webhook is shown failing
    await ntfyFor(s.alias);
    const failing = await waitFor(async () => {
      const channels = ((await get('/api/v1/notifications/channels')).body as { channels: Array<{ name: string; state: string; last_error: string | null; retry_at: string | null }> }).channels;
      return channels.find((c) => c.name === 'webhook' && c.state === 'failing');
    }, { what: 'the webhook shown failing' });
    expect(failing.last_error).toContain('500');
    expect(failing.retry_at).not.toBeNull();
    // When it recovers, the retry delivers the notification and the channel is ok again
    webhook.status = 200;
    const recovered = webhook.received.length;
    await waitFor(() => webhook.received.slice(recovered).some((r) => (r.body as WebhookBody).session?.id === s.id), { timeoutMs: 30000, what: 'the retried webhook' });
    await waitFor(async () => {
      const channels = ((await get('/api/v1/notifications/channels')).body as { channels: Array<{ name: string; state: string }> }).channels;
      return channels.find((c) => c.name === 'webhook')?.state === 'ok';
    }, { timeoutMs: 30000, what: 'the webhook ok again' });
  });
});
