// npm run bench:usage [sessions] [turns] — GET /api/v1/usage?group_by=session over 10,000 sessions × 20 turns (200,000
// session.usage events) on LevelDB, served from the usage projection, beside the same report computed by a full scan of
// the journal in the same run. Also the other groupings, a range of days, and boot (folding the whole journal, then from
// the projection's snapshot). Throws on any HTTP answer but 200, and when the projection and the scan disagree.
import { isDeepStrictEqual } from 'node:util';
import { performance } from 'node:perf_hooks';
import { openLevelJournal } from '../src/journal/journal.factory';
import { Journal, NewEvent, StreamAppend } from '../src/journal/journal.port';
import { emptyUsageState, foldUsage, usageRows } from '../src/usage/usage.projection';
import { UsageService } from '../src/usage/usage.service';
import { tempDir } from '../test/support/temp-dir';
import { startTestApp } from '../test/support/test-app';
import { callApi } from './api-call';
import { gc } from './gc';
import { load } from './http-load';

const SESSIONS = Number(process.argv[2] ?? 10_000);
const TURNS = Number(process.argv[3] ?? 20);
const PROFILES = 10;
const DAYS = 7;
const REQUESTS = 200;
const SCAN_RUNS = 5;
/** The target: the report by session over HTTP, p99. */
const P99_TARGET_MS = 50;

const DAY_MS = 86_400_000;
const START = Date.parse('2026-11-01T00:00:00Z');

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** A session's history as its stream holds it: its creation, then one usage event per turn, spread over the days. */
function sessionEvents(i: number): NewEvent[] {
  const id = `cs_bench${i}`;
  const created = { type: 'session.created', data: { id, alias: `w${i + 1}`, title: `bench ${i}`, runtime: 'claude-code', profile_id: `profile-${i % PROFILES}`, cwd: '/tmp', command: null, args: [], env_keys: [], excluded: false, created_at: START } };
  const turns = Array.from({ length: TURNS }, (_, t) => {
    const at = START + ((i + t) % DAYS) * DAY_MS + t * 1000;
    const input_tokens = 1000 + ((i * 7 + t * 13) % 5000);
    return { type: 'session.usage', data: { at, turn: t + 1, model: 'claude-sonnet-4-5', input_tokens, output_tokens: 200 + (t % 50), cache_read_tokens: 3000, cache_write_tokens: 100, cost_usd: Math.round(input_tokens * 3 + 4500) / 1e6, cost_estimated: false } };
  });
  return [created, ...turns];
}

async function seed(journal: Journal): Promise<number> {
  const BATCH = 50;
  let events = 0;
  for (let from = 0; from < SESSIONS; from += BATCH) {
    const writes: StreamAppend[] = [];
    for (let i = from; i < Math.min(SESSIONS, from + BATCH); i++) {
      const evs = sessionEvents(i);
      events += evs.length;
      writes.push({ stream: `session-cs_bench${i}`, events: evs, expectedVersion: 'no_stream' });
    }
    await journal.appendAll(writes);
  }
  return events;
}

/** The same report, the slow way: every event of the journal read and folded, then grouped. */
async function scanReport(journal: Journal, group: 'session'): Promise<unknown[]> {
  const state = emptyUsageState();
  let after = 0;
  for (;;) {
    const page = await journal.readAll(after, 10_000);
    for (const e of page) foldUsage(state, e);
    if (page.length < 10_000) break;
    after = page[page.length - 1].seq;
  }
  return usageRows(state, group, { since: null, until: null });
}

async function main(): Promise<void> {
  const dir = tempDir('brainstem-usage-bench-');
  const journalDir = `${dir.path}/journal`;
  try {
    const journal = await openLevelJournal(journalDir, { sync: false });
    const t0 = performance.now();
    const events = await seed(journal);
    console.log(`seeded ${SESSIONS.toLocaleString('en-US')} sessions × ${TURNS} turns: ${events.toLocaleString('en-US')} events in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    // The baseline: a full scan per request, in process (no HTTP: it can only look better than it is).
    const scans: number[] = [];
    let scanned: unknown[] = [];
    for (let i = 0; i < SCAN_RUNS; i++) {
      await gc();
      const s0 = performance.now();
      scanned = await scanReport(journal, 'session');
      // Serialised as the route serialises its answer, so both sides do the same work after the rows.
      JSON.stringify(scanned);
      scans.push(performance.now() - s0);
    }
    // The projection's own start: folding the whole journal, then from the snapshot that stop left.
    await gc();
    const fresh = new UsageService(journal, Date.now);
    const f0 = performance.now();
    await fresh.start();
    const fold = performance.now() - f0;
    // What a read costs right after a change (a turn landed): the report built and encoded again, not kept.
    const rebuilt: number[] = [];
    for (let i = 0; i < 50; i++) {
      const r0 = performance.now();
      Buffer.from(JSON.stringify(fresh.report('session', { since: null, until: null })), 'utf8');
      rebuilt.push(performance.now() - r0);
    }
    await fresh.stop();
    await gc();
    const snapped = new UsageService(journal, Date.now);
    const p0 = performance.now();
    await snapped.start();
    const fromSnapshot = performance.now() - p0;
    if (!isDeepStrictEqual(snapped.report('session', { since: null, until: null }), fresh.report('session', { since: null, until: null }))) {
      throw new Error('the projection from its snapshot differs from the one folded from the journal');
    }
    await snapped.stop();
    await journal.close();

    const env = { BRAINSTEM_JOURNAL_DIR: journalDir, BRAINSTEM_JOURNAL_SYNC: 'false' };
    let t = await startTestApp(env, { listen: true });
    const svc = { url: t.url, auth: t.auth() };
    const report = await callApi<{ rows: Array<Record<string, unknown>> }>(svc, 'GET', '/usage?group_by=session', 200);
    if (report.rows.length !== SESSIONS || !isDeepStrictEqual(report.rows, scanned)) throw new Error('the projection and the full scan disagree');
    console.log(`the projection's report by session equals the full scan's (${report.rows.length.toLocaleString('en-US')} rows)`);

    const f = (n: number) => n.toFixed(2).padStart(8);
    const http = async (label: string, path: string) => {
      await gc();
      const r = await load({ url: t.url, method: 'GET', total: REQUESTS, connections: 1, requests: [{ path: `/api/v1${path}`, token: t.token }], expect: 200 });
      console.log(`${label.padEnd(58)} p50 ${f(r.p50)} ms   p99 ${f(r.p99)} ms   (n=${r.requests})`);
      return r;
    };
    console.log('');
    const bySession = await http('GET /usage?group_by=session (projection, HTTP)', '/usage?group_by=session');
    await http('GET /usage?group_by=session&since=…&until=… (3 days)', '/usage?group_by=session&since=2026-11-02&until=2026-11-04');
    await http('GET /usage?group_by=profile', '/usage?group_by=profile');
    await http('GET /usage?group_by=day', '/usage?group_by=day');
    console.log(`${'the report by session rebuilt after a change (in process)'.padEnd(58)} p50 ${f(percentile(rebuilt, 50))} ms   p99 ${f(percentile(rebuilt, 99))} ms   (n=${rebuilt.length})`);
    console.log(`${'the same report by full journal scan (in process, baseline)'.padEnd(58)} p50 ${f(percentile(scans, 50))} ms   p99 ${f(percentile(scans, 99))} ms   (n=${SCAN_RUNS})`);
    console.log(`\nthe projection answers in ${(percentile(scans, 50) / bySession.p50).toFixed(0)}× less time than a scan (p50)`);
    console.log(`target: p99 ≤ ${P99_TARGET_MS} ms by session: ${bySession.p99 <= P99_TARGET_MS ? 'MET' : 'MISSED'} (${bySession.p99.toFixed(2)} ms)`);

    await t.close();
    t = await startTestApp(env, { listen: true });
    const again = await callApi<{ rows: unknown[] }>({ url: t.url, auth: t.auth() }, 'GET', '/usage?group_by=session', 200);
    if (!isDeepStrictEqual(again.rows, report.rows)) throw new Error('the report after a restart differs');
    await t.close();
    console.log(`\nthe projection's start: folding the whole journal ${fold.toFixed(0)} ms; from its snapshot ${fromSnapshot.toFixed(0)} ms (the same report; a restart answers it too)`);
  } finally {
    dir.remove();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
