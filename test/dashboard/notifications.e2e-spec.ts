import { join } from 'node:path';
import { Page } from 'playwright-core';
import { HttpReceiver } from '../support/http-receiver';
import { tempDir } from '../support/temp-dir';
import { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';
import { dashboardHarness, describeInBrowser, screenshot, signIn } from './browser';

type Hook = { title: string; text: string; session: { id: string } | null; actions: Array<{ label: string; url: string }> };

/** The dashboard as an installable app: its manifest and service worker, the notifications view, and the action page. */
describeInBrowser('the installable dashboard and its notifications in Chromium', () => {
  let webhook: HttpReceiver;
  beforeAll(async () => {
    webhook = await HttpReceiver.start();
  });
  const harness = dashboardHarness({ env: () => ({ BRAINSTEM_NOTIFY_WEBHOOK_URL: `${webhook.url}/hook`, BRAINSTEM_NOTIFY_RATE_PER_MINUTE: '600' }) });
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-dash-notify-');
  let t: TestApp;
  let page: Page;
  beforeEach(() => ({ t, page } = harness));
  afterEach(() => reaper.killAll());
  afterAll(async () => {
    await webhook?.close();
    cwd.remove();
  });

  it('registers the service worker, is installable, and offers to install and to notify this device', async () => {
    await signIn(page, t.url, t.token);
    // In the page (strings: this spec's type check has no DOM)
    const worker = await page.evaluate<{ scope: string; script: string | null }>(`navigator.serviceWorker.ready.then((reg) => ({ scope: reg.scope, script: reg.active ? reg.active.scriptURL : null }))`);
    expect(worker).toEqual({ scope: `${t.url}/`, script: `${t.url}/sw.js` });

    // The manifest the page names is served, and Chromium finds nothing that keeps the page from being installed
    const manifest = await page.evaluate<{ type: string | null; body: { display: string } }>(
      `fetch(document.querySelector('link[rel="manifest"]').href).then(async (res) => ({ type: res.headers.get('content-type'), body: await res.json() }))`,
    );
    expect(manifest.type).toMatch(/^application\/manifest\+json/);
    expect(manifest.body.display).toBe('standalone');
    const cdp = await page.context().newCDPSession(page);
    const installability = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: Array<{ errorId: string }> };
    // A test's browser context is incognito, which alone keeps Chromium from installing anything
    expect(installability.installabilityErrors.filter((e) => e.errorId !== 'in-incognito')).toEqual([]);

    await page.getByRole('link', { name: 'Notifications' }).click();
    await page.getByRole('heading', { name: 'Notifications' }).waitFor();
    await page.getByRole('button', { name: 'Notify this device' }).waitFor();
    expect(await page.getByRole('button', { name: 'Notify this device' }).isEnabled()).toBe(true);
    await page.getByText('To install it, use the browser’s menu').or(page.getByRole('button', { name: 'Install the app' })).first().waitFor();
    await page.getByText(/Webhook\s+ok/).waitFor();
    await screenshot(page, 'notifications');
  });

  it('shows a pushed notification as plain text with its actions (the service worker), whatever markup the text holds', async () => {
    await page.context().grantPermissions(['notifications'], { origin: t.url });
    await signIn(page, t.url, t.token);
    await page.evaluate(`navigator.serviceWorker.ready.then(() => true)`);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('ServiceWorker.enable');
    const registrationId = await waitFor(async () => {
      const regs = await page.evaluate<number>(`navigator.serviceWorker.getRegistrations().then((r) => r.length)`);
      return regs > 0 ? '0' : undefined;
    });
    const payload = { id: 'nt_1', kind: 'permission', tag: 'cs_x', title: 'w1 wants to use Bash', text: 'Permission for Bash: echo <img src=x onerror=alert(1)>', url: `${t.url}/#/?session=cs_x`, actions: [{ action: 'allow', label: 'Allow', url: `${t.url}/api/v1/notifications/actions/bsa_x.y` }] };
    await cdp.send('ServiceWorker.deliverPushMessage', { origin: `${t.url}/`, registrationId, data: JSON.stringify(payload) });
    const shown = await waitFor(async () => {
      const list = await page.evaluate<Array<{ title: string; body: string; tag: string; actions: Array<{ action: string; title: string }> }>>(
        `navigator.serviceWorker.ready.then((reg) => reg.getNotifications()).then((ns) => ns.map((n) => ({ title: n.title, body: n.body, tag: n.tag, actions: n.actions.map((a) => ({ action: a.action, title: a.title })) })))`,
      );
      return list.length > 0 ? list : undefined;
    }, { what: 'the notification the worker shows' });
    expect(shown).toEqual([{ title: payload.title, body: payload.text, tag: 'cs_x', actions: [{ action: 'allow', title: 'Allow' }] }]);
  });

  it("the action page says what a link does, acts only when asked, and a second time says it was used", async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { title: 'Page check', command: process.execPath, args: [join(WORKERS, 'asks-permission.js'), 'make test'], cwd: cwd.path } });
    expect(res.statusCode).toBe(201);
    reaper.track(res.json().pid);
    const id = res.json().id as string;
    const hook = await waitFor(() => webhook.received.map((r) => r.body as Hook).find((b) => b.session?.id === id), { what: 'the webhook' });
    const token = hook.actions[0].url.slice(hook.actions[0].url.lastIndexOf('/') + 1);

    await page.goto(`${t.url}/action.html#${token}`);
    await page.getByText(/^Allow the permission request perm_\S+ of session w\d+ \(Page check · command\)\?$/).waitFor();
    // Opening the page did nothing yet
    expect((await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json().pending).toMatchObject({ kind: 'permission' });
    await screenshot(page, 'action-page');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('status').getByText('Allow: done.').waitFor();
    expect((await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json().pending).toBeNull();

    await page.reload();
    await page.getByText('This link was used already: it works once.').waitFor();
    expect(await page.getByRole('button', { name: 'Allow' }).isVisible()).toBe(false);
  });
});
