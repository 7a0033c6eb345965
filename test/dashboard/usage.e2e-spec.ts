import { Page } from 'playwright-core';
import { tempDir } from '../support/temp-dir';
import { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WorkerReaper } from '../support/workers';
import { dashboardHarness, describeInBrowser, screenshot, signIn } from './browser';

type Json = Record<string, any>;

/** Tokens and cost on the sessions, their budgets, and the usage view, in Chromium. */
describeInBrowser('usage in the dashboard, in Chromium', () => {
  const cwd = tempDir('brainstem-dash-cwd-');
  const reaper = new WorkerReaper();
  const harness = dashboardHarness();
  let t: TestApp;
  let page: Page;
  beforeEach(() => ({ t, page } = harness));
  afterEach(() => reaper.killAll());
  afterAll(() => cwd.remove());

  /** A fake claude whose every turn reports 1,600 tokens and 2 cents (claude's result carries them). */
  async function spender(title: string): Promise<Json> {
    const env = { PATH: `${FAKE_BIN}:${process.env.PATH}`, FAKE_CLAUDE_USAGE: JSON.stringify({ input_tokens: 1000, output_tokens: 200, cache_read_tokens: 300, cache_write_tokens: 100, cost_usd: 0.02 }) };
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, runtime: 'claude-code', env, prompt: 'first', title } });
    expect(res.statusCode).toBe(201);
    reaper.track(res.json().pid);
    await waitFor(async () => ((await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${res.json().id}` })).json().usage.turns === 1 ? true : undefined), { what: 'its first turn counted' });
    return res.json();
  }

  it('Given a session that spent, Then its row shows tokens and cost; When its budget is set under what it used, Then it shows held; a bad budget is refused on the page', async () => {
    const s = await spender('spends a little');
    await signIn(page, t.url, t.token);
    await page.getByRole('link', { name: 'Sessions' }).click();
    const row = page.locator(`[data-session="${s.id}"]`);
    await row.getByText('1.6k tokens · $0.02').waitFor();
    await row.getByRole('button', { name: `Open ${s.alias}` }).click();
    const usage = row.getByLabel(`Usage of ${s.alias}`);
    await usage.getByText('1,600 in 1 turn: 1,000 in, 200 out, 300 cache read, 100 cache write').waitFor();

    await usage.getByLabel('Budget, tokens').fill('-5');
    await usage.getByRole('button', { name: `Save the budget of ${s.alias}` }).click();
    await usage.getByText('Tokens must be a whole number of at least 1, or blank for none.').waitFor();
    expect((await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${s.id}` })).json().budget).toBeNull();

    await usage.getByLabel('Budget, tokens').fill('1000');
    await usage.getByRole('button', { name: `Save the budget of ${s.alias}` }).click();
    await row.getByText('held: its session budget of 1,000 tokens: 1,600 tokens used (160%)').waitFor();
    expect((await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${s.id}` })).json()).toMatchObject({ budget: { tokens: 1000 }, held: { reason: 'budget' } });
    await screenshot(page, 'session-usage');

    await usage.getByLabel('Budget, tokens').fill('');
    await usage.getByLabel('Budget, dollars').fill('5');
    await usage.getByRole('button', { name: `Save the budget of ${s.alias}` }).click();
    await waitFor(async () => ((await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${s.id}` })).json().held === null ? true : undefined), { what: 'released by the raise' });
    await row.getByText(/^held:/).waitFor({ state: 'detached' });
  }, 60000);

  it('Given sessions that spent today, Then the usage view shows the day, a bar per session and per profile, and the brain spent nothing', async () => {
    const a = await spender('alpha');
    await spender('beta');
    await signIn(page, t.url, t.token);
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage' }).waitFor();
    const today = new Date().toISOString().slice(0, 10);
    const days = page.getByRole('table', { name: 'Per day' });
    await days.getByRole('cell', { name: today }).waitFor();
    const perSession = page.getByRole('img', { name: 'Cost per session' });
    await perSession.locator(`[data-bar^="${a.alias} alpha"]`).waitFor();
    const bars = await perSession.locator('rect.bar').evaluateAll((rects) => rects.map((r) => Number(r.getAttribute('width'))));
    expect(bars.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...bars)).toBe(360);
    await page.getByRole('img', { name: 'Cost per profile' }).locator('[data-bar="coding-assistant"]').waitFor();
    expect(await page.locator('[data-brain-spend]').textContent()).toContain('$0.00');
    // A turn journaled while the view is open shows without reloading the page.
    const before = await days.locator('tbody tr').first().textContent();
    await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${a.id}/messages`, payload: { text: 'again' } });
    await waitFor(async () => ((await days.locator('tbody tr').first().textContent()) !== before ? true : undefined), { what: 'the day to grow' });
    await screenshot(page, 'usage');
  }, 60000);
});
