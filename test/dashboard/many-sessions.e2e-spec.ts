import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Page } from 'playwright-core';
import { RuntimeCatalog } from '../../src/sessions/runtimes/runtime-catalog';
import { attentionSince, needsAttention } from '../../web/src/attention-queue';
import type { Session } from '../../web/src/types';
import { ManySessions, ReportingRuntime, seedManySessions } from '../support/many-sessions';
import { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { ARTIFACTS, dashboardHarness, describeInBrowser, signIn } from './browser';

const COUNT = 1000;

/** What the window shows (a full page of a thousand rows is tens of thousands of pixels tall). */
async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
}

/**
 * The lists with a thousand sessions, rendered a chunk at a time (web/src/progressive.ts): everything is still reached.
 * No timing here: the long tasks are measured by npm run bench:dashboard.
 */
describeInBrowser('the dashboard with 1,000 sessions in Chromium', () => {
  const harness = dashboardHarness({ env: { BRAINSTEM_MAX_SESSIONS: String(COUNT * 2), BRAINSTEM_JOURNAL_SYNC: 'false' }, viewport: { width: 1280, height: 900 } });
  const runtime = new ReportingRuntime();
  let seeded: ManySessions;
  let t: TestApp;
  let page: Page;
  beforeAll(async () => {
    harness.t.app.get(RuntimeCatalog).register(runtime);
    seeded = await seedManySessions(harness.t, runtime, { count: COUNT });
  }, 300_000);
  beforeEach(() => ({ t, page } = harness));
  afterAll(() => seeded?.remove());

  const listed = async (): Promise<Session[]> => {
    const res = await t.inject({ method: 'GET', url: `/api/v1/coding-sessions?limit=${COUNT}` });
    expect(res.statusCode).toBe(200);
    return res.json().sessions as Session[];
  };
  const rows = (selector: string): Promise<string[]> => page.locator(selector).evaluateAll((els) => els.map((e) => e.getAttribute('data-session') ?? ''));

  it('Given 1,000 sessions and 150 waiting, When the page opens, Then the queue lists every waiting one, oldest first, and a request far down is answered from its card', async () => {
    const waiting = [...seeded.asking, ...seeded.permissions, ...seeded.loops, ...seeded.held];
    expect(seeded.attention).toBe(waiting.length);
    const now = Date.now();
    const expected = (await listed())
      .filter((s) => waiting.includes(s.id))
      .sort((a, b) => (attentionSince(a, now) < attentionSince(b, now) ? -1 : 1))
      .map((s) => s.id);

    await signIn(page, t.url, t.token);
    await page.getByRole('heading', { name: `Needs attention (${waiting.length})` }).waitFor();
    await waitFor(async () => (await page.locator('ol.queue [data-session]').count()) === waiting.length, { what: 'every waiting card rendered' });
    expect(await rows('ol.queue [data-session]')).toEqual(expected);
    expect(new Set(expected)).toEqual(new Set(waiting));

    // The last permission request, a hundred and thirty cards down: allowed from its card, it leaves the queue.
    const last = seeded.permissions[seeded.permissions.length - 1];
    const card = page.locator(`[data-session="${last}"]`);
    await card.getByRole('button', { name: 'Allow Bash' }).click();
    await waitFor(async () => (await listed()).find((s) => s.id === last)?.state === 'working', { what: 'the session to move on' });
    await card.waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: `Needs attention (${waiting.length - 1})` }).waitFor();
    expect(await page.locator('ol.queue [data-session]').count()).toBe(waiting.length - 1);
    await screenshot(page, 'many-attention');
  });

  it('Given 1,000 sessions, When a notification links to the last card of the queue, Then that card is rendered, marked and scrolled into view', async () => {
    const waiting = (await listed()).filter((s) => needsAttention(s, Date.now())).length;
    await signIn(page, t.url, t.token);
    await waitFor(async () => (await page.locator('ol.queue [data-session]').count()) === waiting || undefined, { what: 'the queue rendered' });
    const ids = await rows('ol.queue [data-session]');
    const lastId = ids[ids.length - 1];
    // A notification opens the page at the link (a fresh load; the token is kept for the tab).
    await page.goto(`${t.url}/#/?session=${lastId}`);
    await page.reload();
    const card = page.locator(`article.highlight[data-session="${lastId}"]`);
    await card.waitFor();
    const inView = () =>
      card.evaluate((el) => {
        const box = el.getBoundingClientRect();
        return box.top >= 0 && box.bottom <= (globalThis as unknown as { innerHeight: number }).innerHeight;
      });
    await waitFor(inView, { what: 'the linked card in view' });
    await screenshot(page, 'many-attention-linked');

    // And a second link followed on the open page (only the hash's query changes) marks its card instead
    const otherId = ids[ids.length - 2];
    await page.evaluate(`location.hash = '#/?session=${otherId}'`);
    await page.locator(`article.highlight[data-session="${otherId}"]`).waitFor();
    expect(await page.locator('article.highlight').count()).toBe(1);
  });

  it('Given 1,000 sessions, When the list opens, Then Show more reaches the last session, and filters find sessions far down', async () => {
    await signIn(page, t.url, t.token);
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.getByRole('heading', { name: `Sessions (${COUNT} of ${COUNT})` }).waitFor();
    await waitFor(async () => (await page.locator('ol.sessions [data-session]').count()) === 100, { what: 'the first hundred rows' });
    for (let shown = 100; shown < COUNT; shown += 100) {
      await page.getByRole('button', { name: `Show 100 more (${COUNT - shown} not shown)` }).click();
    }
    await waitFor(async () => (await page.locator('ol.sessions [data-session]').count()) === COUNT, { what: 'every row rendered', timeoutMs: 60_000 });
    expect(await page.getByRole('button', { name: /^Show \d+ more/ }).count()).toBe(0);
    // In the order they were created, down to the last.
    expect(await rows('ol.sessions [data-session]')).toEqual(seeded.ids);
    const lastRow = page.locator(`[data-session="${seeded.ids[COUNT - 1]}"]`);
    await lastRow.scrollIntoViewIfNeeded();
    await lastRow.getByText(`session ${COUNT - 1} of the day`).waitFor();

    // A title far down, by text: that row alone.
    await page.getByLabel('Text').fill(`session ${COUNT - 13} of the day`);
    await waitFor(async () => (await rows('ol.sessions [data-session]')).join() === seeded.ids[COUNT - 13], { what: 'the one session matching' });
    await page.getByRole('heading', { name: `Sessions (1 of ${COUNT})` }).waitFor();

    // By state: the requests still waiting, spread over the list, every one of them.
    await page.getByLabel('Text').fill('');
    await page.getByLabel('State').selectOption('pending_authorization');
    const asking = (await listed()).filter((s) => s.state === 'pending_authorization').map((s) => s.id);
    expect(asking.length).toBe(seeded.permissions.length - 1);
    await waitFor(async () => (await rows('ol.sessions [data-session]')).join() === asking.join() || undefined, { what: 'the waiting requests listed' });

    // Back to all: the first hundred again, rendered from the top.
    await page.getByLabel('State').selectOption('');
    await waitFor(async () => (await page.locator('ol.sessions [data-session]').count()) === 100, { what: 'the first hundred rows again' });
    expect((await rows('ol.sessions [data-session]')).slice(0, 3)).toEqual(seeded.ids.slice(0, 3));
  }, 120_000);

  it('Given the list of 1,000 open, When a session far down asks a question, Then its row and the queue follow', async () => {
    await signIn(page, t.url, t.token);
    const before = (await listed()).filter((s) => needsAttention(s, Date.now())).length;
    await page.getByRole('link', { name: /^Needs attention/ }).waitFor();
    const far = seeded.ids[COUNT - 2];
    const res = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${far}/signals`, headers: t.auth({ worker: far }), payload: { type: 'ask_human', question: 'the last but one asks' } });
    expect(res.statusCode).toBe(200);
    await page.getByRole('heading', { name: /^Needs attention \(\d+\)$/ }).waitFor();
    await page.locator(`ol.queue [data-session="${far}"]`).getByText('the last but one asks').waitFor();
    await waitFor(async () => (await page.title()) === `(${before + 1}) Brainstem` || undefined, { what: 'the tab title to count it' });
  });
});
