import { Page } from 'playwright-core';
import { tempDir } from '../support/temp-dir';
import { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WorkerReaper } from '../support/workers';
import { dashboardHarness, describeInBrowser, screenshot, signIn } from './browser';

type Parked = { reason: string; resumes_at: string | null; source: string };
type Status = { id: string; alias: string; pid: number | null; parked: Parked | null };

/** WCAG's contrast ratio of two computed colours (`rgb(…)` or `rgba(…)`, taken as opaque). */
function contrast(fg: string, bg: string): number {
  const luminance = (css: string): number => {
    const [r, g, b] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
  return (hi + 0.05) / (lo + 0.05);
}

/** A session parked at its model's limit: its flag in the list and detail, resumed or kept from the page, and told apart in Needs attention. */
describeInBrowser('parked sessions in the dashboard, in Chromium', () => {
  const cwd = tempDir('brainstem-dash-cwd-');
  const reaper = new WorkerReaper();
  const harness = dashboardHarness();
  let t: TestApp;
  let page: Page;
  beforeEach(() => ({ t, page } = harness));
  afterEach(() => reaper.killAll());
  afterAll(() => cwd.remove());

  const status = async (id: string): Promise<Status> => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json() as Status;
  const parkedOf = (id: string, what: string): Promise<Parked> => waitFor(async () => (await status(id)).parked ?? undefined, { what });

  /** The flag's colour and the first opaque background behind it, as the browser computed them. */
  const flagColours = (id: string): Promise<{ fg: string; bg: string }> =>
    page.evaluate(`(() => {
      let el = document.querySelector('[data-session="${id}"] .chip.parked');
      const fg = getComputedStyle(el).color;
      while (el && /^rgba\\(.*, 0\\)$|^transparent$/.test(getComputedStyle(el).backgroundColor)) el = el.parentElement;
      return { fg, bg: el ? getComputedStyle(el).backgroundColor : 'rgb(255, 255, 255)' };
    })()`);

  it('Given a claude session its rate limit parked, Then list, detail and Needs attention show it; Keep parked keeps it, Resume now resumes it, and a refused resume says why', async () => {
    const env = { PATH: `${FAKE_BIN}:${process.env.PATH}` };
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, runtime: 'claude-code', env, prompt: 'hit the rate limit', title: 'waits <b>out</b> its limit' } });
    expect(res.statusCode).toBe(201);
    const s = res.json() as Status;
    reaper.track(s.pid);
    const parked = await parkedOf(s.id, 'the session parked');
    expect(parked).toMatchObject({ reason: 'rate_limit', source: 'runtime', resumes_at: expect.stringMatching(/^\d{4}-/) });
    // The page shows the clock time in the machine's zone, as this process does.
    const clock = new Date(parked.resumes_at as string).toTimeString().slice(0, 5);

    // Needs attention: told apart, as nothing to act on; the queue and its count leave it out.
    await signIn(page, t.url, t.token);
    const paused = page.getByRole('region', { name: 'Paused at a limit (1)' });
    const note = paused.locator(`[data-parked="${s.id}"]`);
    await note.getByText(`resumes by itself at ${clock}`).waitFor();
    // The title is the service's text, shown as text.
    expect(await note.textContent()).toContain('waits <b>out</b> its limit');
    expect(await note.locator('b').count()).toBe(0);
    await page.getByRole('heading', { name: 'Needs attention (0)' }).waitFor();
    expect(await page.locator(`ol.queue [data-session="${s.id}"]`).count()).toBe(0);
    await screenshot(page, 'attention-parked');

    // The list: the flag counts down to the reset an hour away (the fake rounds it to a second, the countdown rounds up).
    await page.getByRole('link', { name: 'Sessions' }).click();
    const row = page.locator(`[data-session="${s.id}"]`);
    const flag = row.locator('.chip.parked');
    await flag.waitFor();
    expect(await flag.textContent()).toMatch(new RegExp(`^Parked \\(rate limit\\) · resumes in (1h 1m|1h|59m) \\(${clock}\\)$`));
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const { fg, bg } = await flagColours(s.id);
      expect(contrast(fg, bg)).toBeGreaterThanOrEqual(4.5);
    }
    await page.emulateMedia({ colorScheme: 'light' });

    // The detail: what parked it, and the two actions.
    await row.getByRole('button', { name: `Open ${s.alias}` }).click();
    const detail = row.getByRole('group', { name: `${s.alias} parked at its limit` });
    await detail.getByText('Its model refused a turn at its rate limit (five_hour)').waitFor();
    await screenshot(page, 'session-parked');
    await detail.getByRole('button', { name: 'Keep parked' }).click();
    await flag.getByText('Parked (rate limit) · kept parked', { exact: true }).waitFor();
    await detail.getByRole('button', { name: 'Keep parked' }).waitFor({ state: 'detached' });
    expect((await status(s.id)).parked).toMatchObject({ resumes_at: null, source: 'user' });
    await page.getByRole('link', { name: 'Needs attention' }).click();
    await note.getByText('kept parked until someone resumes it').waitFor();
    await page.getByRole('link', { name: 'Sessions' }).click();
    await row.getByRole('button', { name: `Open ${s.alias}` }).click();

    await detail.getByRole('button', { name: 'Resume now' }).click();
    await flag.waitFor({ state: 'detached' });
    await detail.waitFor({ state: 'detached' });
    expect((await status(s.id)).parked).toBeNull();

    // Parked again; someone else resumes it just before this page's resume reaches the service, which refuses it.
    expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/messages`, payload: { text: 'hit the rate limit again' } })).statusCode).toBeLessThan(300);
    await flag.waitFor();
    await page.route(
      '**/api/v1/coding-sessions/*/resume',
      async (route) => {
        expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${s.id}/resume`, payload: {} })).statusCode).toBe(200);
        await route.continue();
      },
      { times: 1 },
    );
    await detail.getByRole('button', { name: 'Resume now' }).click();
    await row.getByRole('alert').getByText(`session ${s.alias} is not parked at a limit`, { exact: true }).waitFor();
    await flag.waitFor({ state: 'detached' });
    // Still there once the park is gone: the person learns why their resume did nothing.
    await row.getByRole('alert').waitFor();
    await page.getByRole('link', { name: 'Needs attention' }).click();
    await paused.waitFor({ state: 'detached' });
  }, 60000);
});
