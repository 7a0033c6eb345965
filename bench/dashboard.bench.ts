// npm run bench:dashboard [seconds] — the dashboard in real Chromium with 1,000 sessions, beside a blank page's load.
// 1,000 live sessions (a process-less runtime), 100 of them waiting on a question. Measures, from navigation:
// the first view (the attention list rendered), then a click answered (the Sessions view with its rows), and the
// long tasks (PerformanceObserver 'longtask') of the load and of N seconds (default 60) of 100 journaled events/s
// with the Sessions view open. The bench's own calls carry the user's or a worker's credential and must answer the status
// they should; every API answer the page gets must be a 200 (the page sends the token): else the bench stops. Prints figures.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildDashboard } from '../src/dashboard/dashboard.build';
import { RuntimeCatalog } from '../src/sessions/runtimes/runtime-catalog';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../test/support/chromium';
import { InertRuntime } from '../test/support/inert-runtime';
import { tempDir } from '../test/support/temp-dir';
import { startTestApp } from '../test/support/test-app';

const SESSIONS = 1000;
const ASKING = 100;
const SECONDS = Number(process.argv[2] ?? 60);
const EVENTS_PER_S = 100;

/** Long tasks as the page sees them, from its first script on (buffered: the load's count too). */
const OBSERVE_LONG_TASKS = `
  window.__longTasks = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); }).observe({ type: 'longtask', buffered: true });
`;

type Window = { __longTasks: number[] };

const summary = (tasks: number[]): string =>
  `${tasks.length} long tasks (> 50 ms), longest ${tasks.length ? Math.max(...tasks).toFixed(0) : 0} ms, ${tasks.filter((d) => d > 100).length} over 100 ms`;

async function main(): Promise<void> {
  const web = tempDir('brainstem-bench-web-');
  await buildDashboard(web.path);
  const shipped = readdirSync(web.path).filter((f) => f.endsWith('.js'));
  const jsGzipKb = shipped.reduce((sum, f) => sum + gzipSync(readFileSync(join(web.path, f))).length, 0) / 1024;

  const t = await startTestApp({ BRAINSTEM_MAX_SESSIONS: String(SESSIONS * 2), BRAINSTEM_JOURNAL_SYNC: 'false' }, { listen: true, dashboardDir: web.path });
  t.app.get(RuntimeCatalog).register(new InertRuntime());
  const ids: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'inert', cwd: process.cwd(), title: `bench session ${i}` } });
    if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`);
    ids.push(res.json().id);
  }
  const signal = async (id: string, body: object): Promise<void> => {
    const res = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/signals`, headers: t.auth({ worker: id }), payload: body });
    if (res.statusCode !== 200) throw new Error(`signal answered ${res.statusCode}: ${res.body}`);
  };
  for (let i = 0; i < ASKING; i++) await signal(ids[i], { type: 'ask_human', question: `question ${i}: which way?` });
  console.log(`dashboard bench: ${SESSIONS} sessions (${ASKING} waiting on a question), Chromium headless, page JS ${jsGzipKb.toFixed(1)} KB gzipped (${shipped.length} file(s))`);

  const browser = await launchBrowser();
  try {
    // Baseline: a blank page's navigation in the same browser.
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
    const runs: Array<{ first: number; click: number; firstTasks: number[]; tasks: number[] }> = [];
    let kept: { ctx: Awaited<ReturnType<typeof browser.newContext>>; page: Awaited<ReturnType<Awaited<ReturnType<typeof browser.newContext>>['newPage']>> } | null = null;
    for (let run = 0; run < 3; run++) {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await ctx.addInitScript(`sessionStorage.setItem('brainstem.token', ${JSON.stringify(t.token)});${OBSERVE_LONG_TASKS}`);
      const page = await ctx.newPage();
      watch(page);
      const t0 = performance.now();
      await page.goto(`${t.url}/`);
      await page.getByRole('heading', { name: `Needs attention (${ASKING})` }).waitFor();
      await page.locator('[data-session]').nth(ASKING - 1).waitFor();
      const first = performance.now() - t0;
      const firstTasks = await page.evaluate(() => (globalThis as unknown as Window).__longTasks.splice(0));
      const t1 = performance.now();
      await page.getByRole('link', { name: 'Sessions' }).click();
      await page.getByRole('heading', { name: `Sessions (${SESSIONS} of ${SESSIONS})` }).waitFor();
      await page.locator('ol.sessions [data-session]').first().waitFor();
      const click = performance.now() - t1;
      runs.push({ first, click, firstTasks, tasks: await page.evaluate(() => (globalThis as unknown as Window).__longTasks.slice()) });
      if (run < 2) await ctx.close();
      else kept = { ctx, page };
    }
    noneRefused('loading the page and the click');
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(`blank page navigation (baseline)     median ${med(blankRuns).toFixed(0)} ms of ${blankRuns.length}`);
    console.log(`first view (attention list rendered) median ${med(runs.map((r) => r.first)).toFixed(0)} ms of ${runs.length} (${runs.map((r) => r.first.toFixed(0)).join(', ')})`);
    console.log(`click → Sessions view of ${SESSIONS}       median ${med(runs.map((r) => r.click)).toFixed(0)} ms (${runs.map((r) => r.click.toFixed(0)).join(', ')})`);
    console.log(`first view: ${runs.map((r) => summary(r.firstTasks)).join(' | ')}`);
    console.log(`the click:  ${runs.map((r) => summary(r.tasks)).join(' | ')}`);

    // 100 events/s for SECONDS with the Sessions view open: progress reports on sessions in turn, one in ten a question.
    const page = kept!.page;
    await page.evaluate(() => ((globalThis as unknown as Window).__longTasks.length = 0));
    let sent = 0;
    const total = SECONDS * EVENTS_PER_S;
    const started = performance.now();
    while (sent < total) {
      const due = Math.floor(((performance.now() - started) / 1000) * EVENTS_PER_S);
      const batch: Promise<void>[] = [];
      for (; sent < Math.min(due, total); sent++) {
        const id = ids[ASKING + ((sent * 7) % (SESSIONS - ASKING))];
        batch.push(sent % 10 === 9 ? signal(id, { type: 'ask_human', question: `asked at event ${sent}` }) : signal(id, { type: 'report_progress', status: 'working', message: `step ${sent}` }));
      }
      await Promise.all(batch);
      await new Promise((r) => setTimeout(r, 10));
    }
    const elapsed = (performance.now() - started) / 1000;
    // The page's last refetches (100 ms after an event) land after the last event: their long tasks count too.
    await new Promise((r) => setTimeout(r, 2000));
    const tasks = await page.evaluate(() => (globalThis as unknown as Window).__longTasks.slice());
    // The tab title counts the sessions waiting: it shows whether the page kept up with the events.
    noneRefused('during the events');
    const list = await t.inject({ method: 'GET', url: `/api/v1/coding-sessions?limit=${SESSIONS}` });
    if (list.statusCode !== 200) throw new Error(`list answered ${list.statusCode}: ${list.body}`);
    const listed = list.json().sessions as Array<{ pending: unknown }>;
    const waiting = listed.filter((s) => s.pending !== null).length;
    console.log(`after the run the page's title is "${await page.title()}"; the service has ${waiting} sessions waiting`);
    console.log(`${sent} events in ${elapsed.toFixed(1)} s (${(sent / elapsed).toFixed(0)}/s), Sessions view open: ${summary(tasks)}`);
    await kept!.ctx.close();
  } finally {
    await browser.close();
    await t.close();
    web.remove();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
