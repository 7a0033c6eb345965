// npm run bench:dashboard [seconds] [runs] — the dashboard in real Chromium with 1,000 sessions: the long tasks
// (PerformanceObserver 'longtask', tasks over 50 ms) of the first view and of every view switch, each view beside the same
// view with 0 sessions measured in the same run (and a blank page's navigation), then N seconds (default 60) of 100
// journaled events/s with the Sessions view open. The sessions are a busy day's (test/support/many-sessions.ts): questions,
// permission requests, loops, sessions held by their budget, usage, worktrees, a shared checkout. The bench's own calls
// carry the user's or a worker's credential and must answer the status they should; every API answer the page gets must
// be a 200 (the page sends the token): else the bench stops. Prints figures.
// BENCH_TRACE=<prefix>: a Chromium trace of each walk with 1,000 sessions, written to <prefix>-<time>.json.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { buildDashboard } from '../src/dashboard/dashboard.build';
import { RuntimeCatalog } from '../src/sessions/runtimes/runtime-catalog';
import { needsAttention } from '../web/src/attention-queue';
import type { Session } from '../web/src/types';
import { launchBrowser } from '../test/support/chromium';
import { ManySessions, ReportingRuntime, seedManySessions } from '../test/support/many-sessions';
import { tempDir } from '../test/support/temp-dir';
import { TestApp, startTestApp } from '../test/support/test-app';

const SESSIONS = 1000;
const SECONDS = Number(process.argv[2] ?? 60);
const RUNS = Number(process.argv[3] ?? 3);
const EVENTS_PER_S = 100;
/** After a view shows what it is for, what it fetches next (a report, a page of events) still lands: waited for too. */
const SETTLE_MS = 800;

/** Long tasks as the page sees them, from its first script on (buffered: the load's too), with when they started. */
const OBSERVE_LONG_TASKS = `
  window.__longTasks = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration }); }).observe({ type: 'longtask', buffered: true });
`;
type LongTask = { start: number; duration: number };
type Window = { __longTasks: LongTask[] };

/**
 * A step of the walk: a view opened by its nav link (or an action on the view open: `act`), and what shows it is there
 * (with `count` sessions, `waiting` of them in need), checked in the page with querySelector. Playwright's role and label
 * queries walk the whole document in the page's main thread: with a thousand sessions they made long tasks of their own,
 * which the page's observer counted.
 */
interface View {
  name: string;
  route: string;
  act?: (page: Page) => Promise<void>;
  /** Whether the step applies (Show more needs more than a hundred sessions). */
  when?: (count: number) => boolean;
  ready(count: number, waiting: number): { selector: string; text: string };
}

const attentionReady = (_count: number, waiting: number) => ({ selector: waiting > 0 ? 'ol.queue [data-session]' : '#attention-title', text: '' });
const headingOf = { '#/': '#attention-title', '#/sessions': '#sessions-title' } as const;

/** Every route of web/src/app.tsx, in the order the bench clicks them after the first view (the attention view), and three actions on long lists. */
const VIEWS: readonly View[] = [
  { name: 'Sessions', route: '#/sessions', ready: (count) => ({ selector: count > 0 ? 'ol.sessions [data-session]' : '#sessions-title', text: '' }) },
  {
    name: 'Sessions: Show 100 more',
    route: '#/sessions',
    when: (count) => count > 100,
    act: (page) => page.click('button.more'),
    ready: () => ({ selector: 'ol.sessions > li:nth-child(101) [data-session]', text: '' }),
  },
  {
    name: 'Sessions: text filter',
    route: '#/sessions',
    when: (count) => count > 0,
    act: (page) => page.fill('.filters input[type=search]', 'session 987 of'),
    ready: () => ({ selector: '#sessions-title', text: 'Sessions (1 of' }),
  },
  { name: 'Supervision', route: '#/supervision', ready: () => ({ selector: '#rounds-title', text: '' }) },
  { name: 'Main chat', route: '#/chat', ready: () => ({ selector: 'form.compose textarea', text: '' }) },
  { name: 'Profiles', route: '#/profiles', ready: () => ({ selector: '#bindings-title', text: '' }) },
  { name: 'Usage', route: '#/usage', ready: () => ({ selector: '.totals', text: '' }) },
  { name: 'Journal', route: '#/journal', ready: () => ({ selector: '.verify .ok', text: 'Chain ok' }) },
  {
    name: 'Journal: 200 a page',
    route: '#/journal',
    act: async (page) => {
      await page.selectOption('.events-filter select', '200');
      const answered = page.waitForResponse((res) => res.url().includes('/journal/events?') && res.url().includes('limit=200'));
      await page.click('.events-filter button[type=submit]');
      await answered;
    },
    ready: () => ({ selector: 'table.events', text: '' }),
  },
  { name: 'Notifications', route: '#/notifications', ready: () => ({ selector: 'form.card h3', text: 'Rules' }) },
  { name: 'Needs attention', route: '#/', ready: attentionReady },
];

/** Waits for the view's element (and text), and for the heading that counts its sessions, polling once a frame. */
async function shown(page: Page, route: string, check: { selector: string; text: string }, heading: string | null): Promise<void> {
  await page
    .waitForFunction(
    ({ selector, text, heading, title }) => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document;
      const el = doc.querySelector(selector);
      if (!el || !(el.textContent ?? '').includes(text)) return false;
      return title === null || doc.querySelector(title)?.textContent === heading;
    },
    { ...check, heading, title: heading === null ? null : headingOf[route as keyof typeof headingOf] },
    { polling: 'raf', timeout: 60_000 },
    )
    .catch((e: unknown) => {
      throw new Error(`${route}: ${check.selector} "${check.text}" (heading ${heading ?? 'any'}) never showed: ${String(e)}`);
    });
}
const headingFor = (route: string, count: number, waiting: number): string | null =>
  route === '#/' ? `Needs attention (${waiting})` : route === '#/sessions' ? `Sessions (${count} of ${count})` : null;
/** The first view in two: the page loading until its list of sessions is answered, then the sessions rendered. */
const FIRST_LOAD = 'first view: page loading';
const FIRST = 'first view: the sessions';
const NAMES = [FIRST_LOAD, FIRST, ...VIEWS.map((v) => (v.act ? `  ${v.name}` : `→ ${v.name}`))];

/** One walk: each view's time to ready (ms) and the long tasks that started while it was the one on screen. */
type Walk = Map<string, { ready: number; tasks: number[] }>;

async function walk(browser: Browser, t: TestApp, count: number, waiting: number, watch: (page: Page) => void): Promise<Walk> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    await ctx.addInitScript(`sessionStorage.setItem('brainstem.token', ${JSON.stringify(t.token)});${OBSERVE_LONG_TASKS}`);
    const page = await ctx.newPage();
    watch(page);
    const trace = count > 0 ? process.env.BENCH_TRACE : undefined;
    if (trace) await browser.startTracing(page, { path: `${trace}-${Date.now()}.json`, screenshots: false });
    const marks: Array<{ name: string; at: number; ready: number }> = [];
    const t0 = performance.now();
    await page.goto(`${t.url}/`);
    await shown(page, '#/', attentionReady(count, waiting), `Needs attention (${waiting})`);
    const ready = performance.now() - t0;
    // When the page's list of sessions was answered, on the page's clock (0: its navigation). With no session the view
    // shows before it is: waited for.
    const listed = Number(
      await page.waitForFunction(
        () => (performance.getEntriesByType('resource') as unknown as Array<{ name: string; responseEnd: number }>).find((e) => e.name.includes('/api/v1/coding-sessions?') && e.responseEnd > 0)?.responseEnd,
        undefined,
        { polling: 'raf', timeout: 60_000 },
      ).then((handle) => handle.jsonValue()),
    );
    marks.push({ name: FIRST_LOAD, at: 0, ready: listed }, { name: FIRST, at: listed, ready });
    await page.waitForTimeout(SETTLE_MS);
    for (const view of VIEWS) {
      if (view.when && !view.when(count)) continue;
      const at = await page.evaluate(() => performance.now());
      const t1 = performance.now();
      if (view.act) {
        await view.act(page);
        await shown(page, view.route, view.ready(count, waiting), null);
      } else {
        await page.click(`nav a[href="${view.route}"]`);
        await shown(page, view.route, view.ready(count, waiting), headingFor(view.route, count, waiting));
      }
      marks.push({ name: view.act ? `  ${view.name}` : `→ ${view.name}`, at, ready: performance.now() - t1 });
      await page.waitForTimeout(SETTLE_MS);
    }
    const tasks = await page.evaluate(() => (globalThis as unknown as Window).__longTasks.slice());
    if (trace) await browser.stopTracing();
    const out: Walk = new Map();
    marks.forEach((m, i) => {
      const end = marks[i + 1]?.at ?? Infinity;
      out.set(m.name, { ready: m.ready, tasks: tasks.filter((x) => x.start >= m.at && x.start < end).map((x) => x.duration) });
    });
    return out;
  } finally {
    await ctx.close();
  }
}

const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const tasksText = (tasks: number[]): string => (tasks.length === 0 ? '0' : `${tasks.length} (${Math.round(Math.max(...tasks))} ms)`);
const pad = (s: string, n: number): string => s.padEnd(n);

async function main(): Promise<void> {
  const web = tempDir('brainstem-bench-web-');
  await buildDashboard(web.path);
  const shipped = readdirSync(web.path).filter((f) => f.endsWith('.js'));
  const jsGzipKb = shipped.reduce((sum, f) => sum + gzipSync(readFileSync(join(web.path, f))).length, 0) / 1024;

  const t = await startTestApp({ BRAINSTEM_MAX_SESSIONS: String(SESSIONS * 2), BRAINSTEM_JOURNAL_SYNC: 'false' }, { listen: true, dashboardDir: web.path });
  const runtime = new ReportingRuntime();
  t.app.get(RuntimeCatalog).register(runtime);
  const browser = await launchBrowser();
  let seeded: ManySessions | null = null;
  try {
    // What the page's own calls were answered: anything but 200 means the figures measured a refusal, not the page.
    const refused: string[] = [];
    const watch = (page: Page): void => {
      page.on('response', (res) => {
        if (res.url().startsWith(`${t.url}/api/`) && res.status() !== 200) refused.push(`${res.request().method()} ${res.url().slice(t.url.length)} answered ${res.status()}`);
      });
    };
    const noneRefused = (when: string): void => {
      if (refused.length > 0) throw new Error(`${when}, the page's API calls were refused: ${refused.slice(0, 5).join('; ')}${refused.length > 5 ? ` and ${refused.length - 5} more` : ''}`);
    };

    // Baselines: a blank page's navigation, then every view with no session, in the same browser and service.
    const blankCtx = await browser.newContext();
    const blank = await blankCtx.newPage();
    await blank.goto('data:text/html,<p>warm</p>');
    const blankRuns: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await blank.goto(`data:text/html,<p>blank ${i}</p>`, { waitUntil: 'load' });
      blankRuns.push(performance.now() - t0);
    }
    await blankCtx.close();
    const empty: Walk[] = [];
    for (let run = 0; run < RUNS; run++) empty.push(await walk(browser, t, 0, 0, watch));
    noneRefused('walking the views with no session');

    const seedStart = performance.now();
    seeded = await seedManySessions(t, runtime, { count: SESSIONS });
    const s = seeded;
    console.log(
      `dashboard bench: ${SESSIONS} sessions seeded in ${((performance.now() - seedStart) / 1000).toFixed(0)} s: ${s.asking.length} asking, ${s.permissions.length} permission requests, ${s.loops.length} loops, ${s.held.length} held by their budget (${s.attention} need attention); ${s.spending.length} with usage, ${s.worktrees.length} with a worktree, ${s.sharing.length} sharing a checkout`,
    );
    console.log(`Chromium headless, page JS ${jsGzipKb.toFixed(1)} KB gzipped (${shipped.length} file(s)), load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    const full: Walk[] = [];
    for (let run = 0; run < RUNS; run++) full.push(await walk(browser, t, SESSIONS, s.attention, watch));
    noneRefused(`walking the views with ${SESSIONS} sessions`);

    console.log(`blank page navigation (baseline): median ${med(blankRuns).toFixed(0)} ms of ${blankRuns.length}`);
    console.log(`long tasks (> 50 ms) per view: count (longest), each run; ready: click → the view shown, median ms (page loading: navigation → the list of sessions answered; the sessions: navigation → shown)`);
    console.log(`${pad('view (→) or action on it', 28)}${pad('0 sessions', 32)}${pad(`${SESSIONS} sessions`, 36)}ready (0 → ${SESSIONS})`);
    let worst = 0;
    for (const name of NAMES) {
      const of = (walks: Walk[]) => walks.flatMap((w) => w.get(name) ?? []);
      const base = of(empty);
      const loaded = of(full);
      worst = Math.max(worst, ...loaded.flatMap((r) => r.tasks));
      const tasks = (runs: typeof base) => (runs.length === 0 ? '-' : runs.map((r) => tasksText(r.tasks)).join(' | '));
      const ready = (runs: typeof base) => (runs.length === 0 ? '-' : med(runs.map((r) => r.ready)).toFixed(0));
      console.log(`${pad(name, 28)}${pad(tasks(base), 32)}${pad(tasks(loaded), 36)}${ready(base)} → ${ready(loaded)} ms`);
    }
    console.log(`longest task with ${SESSIONS} sessions, any view, any run: ${Math.round(worst)} ms`);

    if (SECONDS > 0) await eventsDrive(browser, t, s, watch, noneRefused);
  } finally {
    await browser.close();
    await t.close();
    seeded?.remove();
    web.remove();
  }
}

/** 100 events/s for SECONDS with the Sessions view open: progress reports on the working sessions in turn, one in ten a question. */
async function eventsDrive(browser: Browser, t: TestApp, s: ManySessions, watch: (page: Page) => void, noneRefused: (when: string) => void): Promise<void> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await ctx.addInitScript(`sessionStorage.setItem('brainstem.token', ${JSON.stringify(t.token)});${OBSERVE_LONG_TASKS}`);
  const page = await ctx.newPage();
  watch(page);
  await page.goto(`${t.url}/`);
  await shown(page, '#/', attentionReady(SESSIONS, s.attention), `Needs attention (${s.attention})`);
  await page.click('nav a[href="#/sessions"]');
  await shown(page, '#/sessions', VIEWS[0].ready(SESSIONS, s.attention), headingFor('#/sessions', SESSIONS, s.attention));
  await page.waitForTimeout(SETTLE_MS);
  await page.evaluate(() => ((globalThis as unknown as Window).__longTasks.length = 0));
  const waiting = new Set([...s.asking, ...s.permissions, ...s.loops, ...s.held]);
  const working = s.ids.filter((id) => !waiting.has(id));
  const signal = async (id: string, body: object): Promise<void> => {
    const res = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/signals`, headers: t.auth({ worker: id }), payload: body });
    if (res.statusCode !== 200) throw new Error(`signal answered ${res.statusCode}: ${res.body}`);
  };
  let sent = 0;
  const total = SECONDS * EVENTS_PER_S;
  const started = performance.now();
  while (sent < total) {
    const due = Math.floor(((performance.now() - started) / 1000) * EVENTS_PER_S);
    const batch: Promise<void>[] = [];
    for (; sent < Math.min(due, total); sent++) {
      const id = working[(sent * 7) % working.length];
      batch.push(sent % 10 === 9 ? signal(id, { type: 'ask_human', question: `asked at event ${sent}` }) : signal(id, { type: 'report_progress', status: 'working', message: `step ${sent}` }));
    }
    await Promise.all(batch);
    await new Promise((r) => setTimeout(r, 10));
  }
  const elapsed = (performance.now() - started) / 1000;
  // The page's last refetches (100 ms after an event) land after the last event: their long tasks count too.
  await new Promise((r) => setTimeout(r, 2000));
  const tasks = (await page.evaluate(() => (globalThis as unknown as Window).__longTasks.slice())).map((x) => x.duration);
  noneRefused('during the events');
  // The tab title counts the sessions needing attention: it shows whether the page kept up with the events.
  const list = await t.inject({ method: 'GET', url: `/api/v1/coding-sessions?limit=${SESSIONS}` });
  if (list.statusCode !== 200) throw new Error(`list answered ${list.statusCode}: ${list.body}`);
  const now = Date.now();
  const need = (list.json().sessions as Session[]).filter((x) => needsAttention(x, now)).length;
  console.log(`after the events the page's title is "${await page.title()}"; the service has ${need} sessions needing attention`);
  console.log(`${sent} events in ${elapsed.toFixed(1)} s (${(sent / elapsed).toFixed(0)}/s), Sessions view open: ${tasksText(tasks)} long tasks, load average ${loadavg()[0].toFixed(1)}`);
  await ctx.close();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
