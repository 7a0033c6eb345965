import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { Page } from 'playwright-core';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { RuntimeCatalog } from '../../src/sessions/runtimes/runtime-catalog';
import { InertRuntime } from '../support/inert-runtime';
import { segmentKeyHolding } from '../support/stored-events';
import { tempDir } from '../support/temp-dir';
import { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';
import { dashboardHarness, describeInBrowser, screenshot, signIn } from './browser';

type Status = { id: string; alias: string; title: string; runtime: string; state: string; excluded: boolean; pid: number | null };

/** The sessions and journal views, in one Chromium, one page at a time. */
describeInBrowser('the sessions and journal views in Chromium', () => {
  const cwd = tempDir('brainstem-dash-cwd-');
  const reaper = new WorkerReaper();
  const harness = dashboardHarness({ env: { BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '200', BRAINSTEM_MAX_SESSIONS: '200' } });
  let t: TestApp;
  let page: Page;
  beforeEach(() => ({ t, page } = harness));
  afterEach(() => reaper.killAll());
  afterAll(() => cwd.remove());

  const status = async (id: string): Promise<Status> => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json() as Status;

  async function startQuiet(title: string): Promise<Status> {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { command: process.execPath, args: [join(WORKERS, 'quiet.js')], cwd: cwd.path, title } });
    expect(res.statusCode).toBe(201);
    reaper.track(res.json().pid);
    return res.json() as Status;
  }

  async function openSessions(on: Page = page): Promise<void> {
    await signIn(on, t.url, t.token);
    await on.getByRole('link', { name: 'Sessions' }).click();
    await on.getByRole('heading', { name: /^Sessions/ }).waitFor();
  }

  /** Whether the page shows the session supervised (its switch), read until it says `want`. */
  const switchShows = (on: Page, s: Status, want: boolean, what: string) =>
    waitFor(async () => (await on.getByRole('switch', { name: `Supervise ${s.alias}` }).getAttribute('aria-checked')) === String(want), { what });

  it('Given three sessions filtered by text to two, When the visible ones are inverted, Then the preview names exactly those two and exactly they flip', async () => {
    const a = await startQuiet('invert-me (a.b) one');
    const b = await startQuiet('invert-me (a.b) two');
    const other = await startQuiet('leave me alone');
    await openSessions();
    for (const s of [a, b, other]) await page.locator(`[data-session="${s.id}"]`).waitFor();

    // Pattern characters in the filter are plain text: "(a.b)" matches only itself.
    await page.getByLabel('Text').fill('(a.b)');
    await page.locator(`[data-session="${other.id}"]`).waitFor({ state: 'detached' });
    expect(await page.locator('[data-session]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session')))).toEqual([a.id, b.id]);

    await page.getByRole('button', { name: 'Invert the visible (2)…' }).click();
    const preview = page.getByRole('region', { name: 'Invert preview' });
    expect(await preview.locator('[data-flip]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-flip')))).toEqual([a.id, b.id]);
    await preview.getByText('supervised → excluded').first().waitFor();
    await screenshot(page, 'sessions-invert-preview');

    await preview.getByRole('button', { name: 'Apply the invert' }).click();
    await waitFor(async () => (await status(a.id)).excluded && (await status(b.id)).excluded, { what: 'the two visible sessions to be excluded' });
    expect((await status(other.id)).excluded).toBe(false);
    await preview.waitFor({ state: 'detached' });
    // The stream brings the change back to the page.
    await waitFor(async () => (await page.getByRole('switch', { name: `Supervise ${a.alias}` }).getAttribute('aria-checked')) === 'false', { what: 'the page to show a excluded' });
    await waitFor(async () => (await page.getByRole('switch', { name: `Supervise ${b.alias}` }).getAttribute('aria-checked')) === 'false', { what: 'the page to show b excluded' });

    // The per-session switch turns one back, from the keyboard.
    await page.getByRole('switch', { name: `Supervise ${a.alias}` }).focus();
    await page.keyboard.press('Space');
    await waitFor(async () => !(await status(a.id)).excluded, { what: 'a supervised again' });
    expect((await status(b.id)).excluded).toBe(true);
    await page.getByLabel('Text').fill('');
    await screenshot(page, 'sessions');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'sessions-phone-dark');
  });

  it('Given the start form, When a command session is started from it, Then it runs, its output shows as text and follows live, a message reaches it and Stop ends it', async () => {
    // The worker prints a second line only once the test says so, after the panel showed the first.
    const go = join(cwd.path, 'go-on');
    await openSessions();
    const form = page.getByRole('form', { name: 'Start a session' });
    // The runtimes are the service's, not a list in the page.
    const offered = (await t.inject({ method: 'GET', url: '/api/v1/dashboard/settings' })).json().session_runtimes.map((r: { name: string }) => r.name);
    await waitFor(async () => (await form.getByLabel('Runtime').locator('option').count()) === offered.length, { what: "the service's runtimes in the form" });
    expect(await form.getByLabel('Runtime').locator('option').evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value))).toEqual(offered);
    await form.getByLabel('Runtime').selectOption('command');
    await form.getByLabel('Title (optional)').fill('started from the form');
    await form.getByLabel('Working folder').fill(cwd.path);
    await form.getByLabel('Command', { exact: true }).fill(process.execPath);
    await form.getByLabel('Arguments (one a line)').fill(['-e', `console.log("ready <b>now</b>"); const t = setInterval(() => { if (require("fs").existsSync(${JSON.stringify(go)})) { console.log("written later"); clearInterval(t); setInterval(() => undefined, 1000); } }, 50)`].join('\n'));
    await screenshot(page, 'sessions-start-form');
    await form.getByRole('button', { name: 'Start the session' }).click();
    const started = await form.getByRole('status').filter({ hasText: /^Started w\d+ \(cs_/ }).textContent();
    const id = /\((cs_[^)]+)\)/.exec(started ?? '')?.[1];
    expect(id).toBeDefined();
    const s = await status(id as string);
    reaper.track(s.pid);
    expect(s).toEqual(expect.objectContaining({ title: 'started from the form', runtime: 'command' }));

    const row = page.locator(`[data-session="${s.id}"]`);
    await row.getByRole('button', { name: `Open ${s.alias}` }).click();
    // The tail follows the session's output stream: what the worker writes after the panel opened shows without a reload.
    const output = row.getByLabel(`Output of ${s.alias}`);
    await waitFor(async () => (await output.textContent()) === 'ready <b>now</b>\n', { what: 'the output tail, as text' });
    writeFileSync(go, '');
    await waitFor(async () => (await output.textContent()) === 'ready <b>now</b>\nwritten later\n', { what: 'the line written after the panel opened' });

    await row.getByLabel(`Reply to ${s.alias}`).fill('carry on');
    await row.getByRole('button', { name: `Send to ${s.alias}` }).click();
    await waitFor(
      async () => {
        const sent = (await t.inject({ method: 'GET', url: `/api/v1/journal/events?stream=session-${s.id}&type=session.message_dispatched` })).json();
        return sent.events.some((e: { data: { text: string } }) => e.data.text === 'carry on');
      },
      { what: 'the message to be dispatched' },
    );
    await screenshot(page, 'sessions-open');

    await row.getByRole('button', { name: `Stop ${s.alias}` }).click();
    await waitFor(async () => (await status(s.id)).state === 'exited', { what: 'the stopped session to exit' });
    await row.getByText('exited').first().waitFor();
  });

  it('Given supervision on, When a round starts and the brain completes it, Then the timeline shows its reasons, the prompt collapsed, and then the summary as text', async () => {
    const w = await startQuiet('reports done');
    await signIn(page, t.url, t.token);
    await page.getByRole('link', { name: 'Supervision' }).click();
    await page.getByText('No round yet.').waitFor();
    expect((await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/autonomous', payload: { enabled: true } })).statusCode).toBe(200);
    const signalled = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${w.id}/signals`, payload: { type: 'report_progress', status: 'completed', message: 'tests <b>green</b>' } });
    expect(signalled.statusCode).toBe(200);
    const round = await waitFor(async () => (await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/rounds' })).json().rounds[0] as { id: string; prompt: string } | undefined, { what: 'the round' });

    const card = page.locator(`[data-round="${round.id}"]`);
    await card.getByText('in_flight').waitFor();
    await card.locator('.reasons li').filter({ hasText: w.alias }).waitFor();
    const prompt = card.locator('pre.prompt');
    expect(await prompt.isVisible()).toBe(false);
    await card.getByText('The prompt').click();
    await prompt.waitFor({ state: 'visible' });
    expect(await prompt.textContent()).toBe(round.prompt);

    const done = await t.inject({ method: 'POST', url: `/api/v1/session-os/main-brain/rounds/${round.id}/complete`, headers: t.auth('main_brain'), payload: { summary: 'told <i>w1</i> to ship' } });
    expect(done.statusCode).toBe(200);
    await card.locator('blockquote.summary').filter({ hasText: 'told <i>w1</i> to ship' }).waitFor();
    await card.getByText('completed', { exact: true }).waitFor();
    await screenshot(page, 'supervision-rounds');
  });

  it('Given the page open in two tabs, When a session is excluded and supervision turned on in one, Then the other shows both without a reload', async () => {
    const s = await startQuiet('seen from two tabs');
    const other = await page.context().newPage();
    await openSessions(page);
    await openSessions(other);
    await switchShows(other, s, true, 'the second tab to show the session supervised');

    await page.getByRole('switch', { name: `Supervise ${s.alias}` }).click();
    await waitFor(async () => (await status(s.id)).excluded, { what: 'the session excluded' });
    await switchShows(other, s, false, 'the second tab to show the session excluded');

    await page.getByRole('link', { name: 'Supervision' }).click();
    await other.getByRole('link', { name: 'Supervision' }).click();
    const otherSwitch = other.getByRole('switch', { name: 'Supervision' });
    expect(await otherSwitch.getAttribute('aria-checked')).toBe('false');
    await page.getByRole('switch', { name: 'Supervision' }).click();
    await waitFor(async () => (await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/autonomous' })).json().autonomous?.enabled === true, { what: 'supervision on' });
    await waitFor(async () => (await otherSwitch.getAttribute('aria-checked')) === 'true', { what: 'the second tab to show supervision on' });
    await other.getByText('On: the main brain is woken').waitFor();
    await screenshot(other, 'two-tabs-second');
    await page.getByRole('switch', { name: 'Supervision' }).click();
    await waitFor(async () => (await otherSwitch.getAttribute('aria-checked')) === 'false', { what: 'the second tab to show supervision off' });
    await other.close();
  });

  it('Given three sessions, When the scope buttons all, only and except are used, Then the supervised set is what each says, in the service and on the page', async () => {
    const [a, b, c] = [await startQuiet('scope a'), await startQuiet('scope b'), await startQuiet('scope c')];
    await openSessions();
    const excluded = async () => Promise.all([a, b, c].map(async (s) => (await status(s.id)).excluded));
    const shows = async (want: [boolean, boolean, boolean], what: string) => {
      await waitFor(async () => JSON.stringify(await excluded()) === JSON.stringify(want.map((w) => !w)), { what: `the service: ${what}` });
      for (const [i, s] of [a, b, c].entries()) await switchShows(page, s, want[i], `the page: ${what} (${s.alias})`);
    };
    const scope = page.getByLabel('Supervision scope');

    await page.getByRole('checkbox', { name: `Select ${a.alias}` }).check();
    await page.getByRole('checkbox', { name: `Select ${b.alias}` }).check();
    await scope.getByRole('button', { name: 'Supervise only the selected (2)' }).click();
    await shows([true, true, false], 'only a and b supervised');

    await page.getByRole('checkbox', { name: `Select ${b.alias}` }).uncheck();
    await scope.getByRole('button', { name: 'Supervise all except the selected (1)' }).click();
    await shows([false, true, true], 'all but a supervised');
    await screenshot(page, 'sessions-scope-except');

    await scope.getByRole('button', { name: 'Supervise all', exact: true }).click();
    await shows([true, true, true], 'all supervised');
  });

  it('Given more than a hundred sessions, When the list opens, Then it renders a hundred rows and Show more renders the rest', async () => {
    // Process-less sessions: a hundred workers would not fit the machine.
    t.app.get(RuntimeCatalog).register(new InertRuntime());
    for (let i = 0; i < 105; i++) expect((await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'inert', cwd: cwd.path, title: `many ${i}` } })).statusCode).toBe(201);
    const total = (await t.inject({ method: 'GET', url: '/api/v1/coding-sessions?limit=1000' })).json().sessions.length as number;
    expect(total).toBeGreaterThanOrEqual(105);
    await openSessions();
    await page.getByRole('heading', { name: `Sessions (${total} of ${total})` }).waitFor();
    // Rendered a chunk at a time (web/src/progressive.ts), up to the hundred of the first page.
    await waitFor(async () => (await page.locator('ol.sessions [data-session]').count()) === 100, { what: 'the first hundred rows' });
    const more = page.getByRole('button', { name: `Show ${Math.min(100, total - 100)} more (${total - 100} not shown)` });
    await more.waitFor();
    expect(await page.locator('ol.sessions [data-session]').count()).toBe(100);
    await more.click();
    await waitFor(async () => (await page.locator('ol.sessions [data-session]').count()) === Math.min(200, total), { what: 'the next rows rendered' });
    // A filter starts again from the first hundred of what it shows.
    await page.getByLabel('Text').fill('many 10');
    await waitFor(async () => (await page.locator('ol.sessions [data-session]').count()) === 6, { what: 'many 10 and many 100–104' });
    expect(await page.getByRole('button', { name: /^Show \d+ more/ }).count()).toBe(0);
  });

  it('Given the journal view, When it opens, Then the chain verifies ok at the head and events page by type', async () => {
    await startQuiet('for the journal');
    await signIn(page, t.url, t.token);
    await page.getByRole('link', { name: 'Journal' }).click();
    const verify = (await t.inject({ method: 'GET', url: '/api/v1/journal/verify' })).json();
    expect(verify.ok).toBe(true);
    await page.getByRole('status').filter({ hasText: /^Chain ok: \d+ events checked, head seq \d+/ }).waitFor();

    await page.getByLabel('Type').fill('session.created');
    await page.getByRole('button', { name: 'Show the events' }).click();
    const created = (await t.inject({ method: 'GET', url: '/api/v1/journal/events?type=session.created&limit=50' })).json();
    await waitFor(async () => (await page.locator('table.events tbody tr').count()) === created.events.length, { what: 'the created events listed' });
    const types = await page.locator('table.events tbody td:nth-child(4)').allTextContents();
    expect(new Set(types)).toEqual(new Set(['session.created']));
    await screenshot(page, 'journal');

    // Paging: ten at a time from the start of the journal, forward and back.
    await page.getByLabel('Type').fill('');
    await page.getByLabel('Per page').selectOption('10');
    await page.getByRole('button', { name: 'Show the events' }).click();
    const seqs = (): Promise<string[]> => page.locator('table.events tbody td:nth-child(1)').allTextContents();
    const first = (await t.inject({ method: 'GET', url: '/api/v1/journal/events?limit=20' })).json().events.map((e: { seq: number }) => String(e.seq));
    expect(first).toHaveLength(20);
    await waitFor(async () => JSON.stringify(await seqs()) === JSON.stringify(first.slice(0, 10)), { what: 'the first page of ten' });
    await page.getByRole('button', { name: 'Next page' }).click();
    await waitFor(async () => JSON.stringify(await seqs()) === JSON.stringify(first.slice(10, 20)), { what: 'the second page' });
    await page.getByRole('button', { name: 'Previous page' }).click();
    await waitFor(async () => JSON.stringify(await seqs()) === JSON.stringify(first.slice(0, 10)), { what: 'back to the first page' });
  });
  it('Given an event damaged under the running service, When the journal is verified from the page, Then it says the chain is broken at that seq', async () => {
    const created = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: { name: 'Damaged later', version: 2, description: 'the damaged-event marker' } });
    expect(created.statusCode).toBe(201);
    const seq = (await t.inject({ method: 'GET', url: '/api/v1/journal/events?type=profile.created&limit=1000' })).json().events.find((e: { data: { id: string } }) => e.data.id === 'damaged-later').seq as number;
    await signIn(page, t.url, t.token);
    await page.getByRole('link', { name: 'Journal' }).click();
    await page.getByRole('status').filter({ hasText: /^Chain ok/ }).waitFor();

    // The service holds LevelDB's lock, so the damage is done through its own handle: one byte of that event's body.
    const db = (t.app.get<symbol, Journal>(JOURNAL) as unknown as { storage: { db: ClassicLevel<string, string> } }).storage.db;
    const key = await segmentKeyHolding(db, seq);
    const segment = (await db.get(key)) as string;
    expect(segment).toContain('damaged-event marker');
    await db.put(key, segment.replace('damaged-event marker', 'damaged-event markeR'));

    await page.getByRole('button', { name: 'Verify the journal again' }).click();
    await page.getByRole('alert').filter({ hasText: new RegExp(`^Chain broken at seq ${seq}\\b`) }).waitFor();
    expect((await t.inject({ method: 'GET', url: '/api/v1/journal/verify' })).json()).toMatchObject({ ok: false, first_bad_seq: seq });
    await screenshot(page, 'journal-broken');
  });
});
