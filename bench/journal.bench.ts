// npm run bench:journal [events] [-- --postgres] — journal throughput against raw classic-level in the same run; with
// --postgres, the same workload on a throwaway PostgreSQL cluster too, then the nodes' figures: event propagation
// between two nodes (bench:cluster) and failover time (bench:failover, --kills N). Prints figures, asserts nothing.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ClassicLevel } from 'classic-level';
import { mapBounded } from '../src/common/map-bounded';
import { canonicalJson } from '../src/journal/canonical-json';
import { EventJournal } from '../src/journal/event-journal';
import { openLevelJournal, openPgJournal } from '../src/journal/journal.factory';
import { ANCHOR_EVERY, CHECK_LEN, HASH_LEN, recordBody } from '../src/journal/journal.storage';
import { REBUILD_WIDTH } from '../src/sessions/session.registry';
import { Pool } from 'pg';
import { startPgCluster } from '../test/support/pg-cluster';
import { tempDir } from '../test/support/temp-dir';

const ARGS = process.argv.slice(2);
const KILLS_AT = ARGS.indexOf('--kills');
const REPLAY_EVENTS = Number(ARGS.find((a, i) => !a.startsWith('--') && (KILLS_AT < 0 || i !== KILLS_AT + 1)) ?? 1_000_000);
const POSTGRES = ARGS.includes('--postgres');
const STREAMS = 1000;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);

const payload = (i: number) => ({
  session: `cs_${(i % STREAMS).toString(36).padStart(8, '0')}`,
  state: 'pending_handling',
  message: `worker ${i % STREAMS} finished its turn; tests pass; waiting for the next instruction`,
  n: i,
});
/** A record as the journal stores it, with `prefix` characters of hashes or checks before the event's JSON. */
const rawValue = (i: number, prefix = 2 * HASH_LEN) =>
  'f'.repeat(prefix) + JSON.stringify({ at: new Date().toISOString(), data: payload(i), meta: { actor: 'bench' }, seq: i, stream: 's', type: 'session.state_changed', version: i });

/**
 * A record as the journal stores it for bench:journal's 64 appenders: their stream names, the meta of an event appended
 * outside a request, keys in canonical order, and hex hashes (`prefix` characters) rather than a run of one letter.
 */
const hex = createHash('sha256').update('bench').digest('hex').repeat(2);
const journalRecord = (i: number, prefix: number) =>
  hex.slice(0, prefix) +
  canonicalJson({ at: new Date().toISOString(), data: payload(i), meta: { actor: 'system', causation_seq: null, correlation_id: null }, seq: i, stream: `session-w${i % 64}`, type: 'session.state_changed', version: i });
const also = (perSec: number, base: number, name: string) => console.log(`${''.padEnd(81)}${((perSec / base) * 100).toFixed(0).padStart(4)}% of ${name}`);
const rate = (events: number, ms: number) => (events / ms) * 1000;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(10);
const report = (label: string, perSec: number, ceiling: number | null, ceilingName = 'raw') => {
  console.log(`${label.padEnd(58)} ${fmt(perSec)} events/s${ceiling ? `   ${((perSec / ceiling) * 100).toFixed(0).padStart(4)}% of ${ceilingName}` : ''}`);
};

/**
 * Raw LevelDB with one put per event and values serialised before the clock starts. `chained` is
 * classic-level's fastest form (db.batch() then put() per op); `array` is its documented batched-put call,
 * db.batch([ops]), which validates and encodes every op in JavaScript first. `segment64` writes what the
 * journal writes for a group of 64 (one segment of 64 records, the first with both hashes, every eighth
 * with its own, the others with a check of it, and the head) with no JavaScript in between: the most 64
 * closed-loop appenders could reach, since each of them has one event in each group. Its records are the
 * journal's own for this bench (journalRecord), so the segment is as long as the journal's.
 */
async function rawBatchedPut(sync: boolean, form: 'chained' | 'array' | 'segment64'): Promise<number> {
  const dir = tempDir('bench-raw-');
  const db = new ClassicLevel<string, string>(dir.path, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  const values = Array.from({ length: 10_000 }, (_, i) => rawValue(i));
  const segments = Array.from({ length: 100 }, (_, k) =>
    Array.from({ length: 64 }, (_, j) => journalRecord(k * 64 + j, j === 0 ? 2 * HASH_LEN : j % ANCHOR_EVERY === 0 ? HASH_LEN : CHECK_LEN)).join('\n'),
  );
  let seq = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < SECONDS * 1000) {
    if (form === 'segment64') {
      const batch = db.batch();
      seq += 64;
      batch.put('g!' + String(seq).padStart(16, '0'), segments[(seq / 64) % segments.length]);
      batch.put('m!head', `{"seq":${seq}}`);
      await batch.write({ sync });
    } else if (form === 'chained') {
      const batch = db.batch();
      for (let i = 0; i < 100; i++) {
        seq++;
        batch.put('e!' + String(seq).padStart(16, '0'), values[seq % values.length]);
      }
      await batch.write({ sync });
    } else {
      const ops = Array.from({ length: 100 }, () => {
        seq++;
        return { type: 'put' as const, key: 'e!' + String(seq).padStart(16, '0'), value: values[seq % values.length] };
      });
      await db.batch(ops, { sync });
    }
  }
  const r = rate(seq, performance.now() - t0);
  await db.close();
  dir.remove();
  return r;
}

/** Where a journal is kept: a fresh LevelDB directory or a fresh database each time, opened with fsync on. */
interface Place {
  open(options?: { sync?: boolean }): Promise<EventJournal>;
  remove(): Promise<void>;
}
type Store = () => Promise<Place>;
const levelStore: Store = async () => {
  const dir = tempDir('bench-journal-');
  return { open: (o) => openLevelJournal(dir.path, { sync: o?.sync ?? true }), remove: async () => dir.remove() };
};

async function journalAppenders(concurrency: number, perAppend = 1, store: Store = levelStore): Promise<number> {
  const place = await store();
  const journal = await place.open();
  let done = 0;
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < deadline) {
        const events = [];
        for (let i = 0; i < perAppend; i++) events.push({ type: 'session.state_changed', data: payload(done + i) });
        await journal.append(`session-w${w}`, events);
        done += perAppend;
      }
    }),
  );
  const r = rate(done, performance.now() - t0);
  await journal.close();
  await place.remove();
  return r;
}

async function fill(place: Place, total: number): Promise<void> {
  const journal = await place.open({ sync: false });
  const perAppend = 1000;
  for (let i = 0; i < total; i += perAppend) {
    // Interleave streams as a real service would, and snapshot each stream as it passes 500 events.
    await Promise.all(
      Array.from({ length: 10 }, (_, k) =>
        journal.append(
          `session-${((i / perAppend) * 10 + k) % STREAMS}`,
          Array.from({ length: perAppend / 10 }, (_, j) => ({ type: 'session.state_changed', data: payload(i + k * 100 + j) })),
        ),
      ),
    );
    // Snapshots every 50,000 events, but not in the last 20,000, so boot has a real tail to replay.
    if ((i / perAppend) % 50 === 49 && i < total - 20_000) {
      for (let s = 0; s < STREAMS; s++) {
        const version = await journal.streamVersion(`session-${s}`);
        if (version > 0) await journal.saveSnapshot(`session-${s}`, { version, state: { events: version } });
      }
    }
  }
  await journal.close();
}

async function rawReplay(dir: string): Promise<{ perSec: number; count: number }> {
  const db = new ClassicLevel<string, string>(`${dir}/db`, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  const t0 = performance.now();
  let count = 0;
  // The journal's stored form: segments of '\n'-joined records, each a hash or a check of it (the first also
  // its prev hash), then the event's JSON.
  const it = db.iterator({ gte: 'g!', lt: 'g"' });
  for (;;) {
    const entries = await it.nextv(64);
    if (entries.length === 0) break;
    for (const [, v] of entries) {
      for (const record of v.split('\n')) {
        JSON.parse(recordBody(record));
        count++;
      }
    }
  }
  await it.close();
  const perSec = rate(count, performance.now() - t0);
  await db.close();
  return { perSec, count };
}

async function journalReplay(place: Place): Promise<{ perSec: number; count: number }> {
  const journal = await place.open();
  const t0 = performance.now();
  const report = await journal.verify();
  const perSec = rate(report.checked, performance.now() - t0);
  if (!report.ok) throw new Error(`verify failed: ${report.error}`);
  let count = 0;
  const t1 = performance.now();
  for (let after = 0; ; ) {
    const page = await journal.readAll(after, 4096);
    if (page.length === 0) break;
    count += page.length;
    after = page[page.length - 1].seq;
  }
  const readAllPerSec = rate(count, performance.now() - t1);
  await journal.close();
  return { perSec: Math.min(perSec, readAllPerSec), count };
}

/** Rebuilds every stream from its snapshot plus its tail, `width` streams at a time, as the session registry does on boot. */
async function boot(place: Place, width: number): Promise<{ ms: number; openMs: number; streams: number; tailEvents: number }> {
  const t0 = performance.now();
  const journal: EventJournal = await place.open();
  const openMs = performance.now() - t0;
  const tails = await mapBounded(Array.from({ length: STREAMS }, (_, s) => `session-${s}`), width, async (stream) => {
    const snap = await journal.loadSnapshot(stream);
    return (await journal.readStream(stream, (snap?.version ?? 0) + 1)).length;
  });
  const ms = performance.now() - t0;
  await journal.close();
  return { ms, openMs, streams: STREAMS, tailEvents: tails.reduce((a, b) => a + b, 0) };
}

async function main(): Promise<void> {
  console.log(`journal benchmark — ${SECONDS}s per throughput figure, ${REPLAY_EVENTS.toLocaleString('en-US')} events for replay and boot`);
  console.log('\nraw classic-level (batches of 100 puts, values serialised in advance)');
  report('  chained batch, sync off', await rawBatchedPut(false, 'chained'), null);
  const rawSync = await rawBatchedPut(true, 'chained');
  report('  chained batch, sync on (the ceiling)', rawSync, null);
  const rawArraySync = await rawBatchedPut(true, 'array');
  report('  db.batch(array), sync on', rawArraySync, null);
  const rawGroupBound = await rawBatchedPut(true, 'segment64');
  report('  one 64-event segment per batch, sync on (bound for 64)', rawGroupBound, rawSync, 'chained');

  console.log('\njournal append (sync on, one event per append, group-committed)');
  const both = (label: string, perSec: number) => {
    report(label, perSec, rawSync, 'chained');
    also(perSec, rawArraySync, 'db.batch(array)');
  };
  const level = { app1: 0, app64: 0, replay: 0, boot: 0 };
  for (const c of [1, 8]) {
    const perSec = await journalAppenders(c);
    if (c === 1) level.app1 = perSec;
    both(`  ${c} concurrent appender${c > 1 ? 's' : ''}`, perSec);
  }
  const app64 = await journalAppenders(64);
  level.app64 = app64;
  both('  64 concurrent appenders', app64);
  also(app64, rawGroupBound, 'the bound for 64');
  both('  1 appender, 100 events per append (cf. batched commits)', await journalAppenders(1, 100));

  const dir = tempDir('bench-replay-');
  const place: Place = { open: (o) => openLevelJournal(dir.path, { sync: o?.sync ?? true }), remove: async () => dir.remove() };
  try {
    const tf = performance.now();
    await fill(place, REPLAY_EVENTS);
    console.log(`\nfilled ${REPLAY_EVENTS.toLocaleString('en-US')} events over ${STREAMS} streams in ${((performance.now() - tf) / 1000).toFixed(1)} s (sync off, 1,000 per append)`);
    const raw = await rawReplay(dir.path);
    report('  raw nextv iteration + JSON.parse', raw.perSec, null);
    const replay = await journalReplay(place);
    report('  journal full replay with hash-chain verification', replay.perSec, raw.perSec, 'raw scan');
    level.replay = replay.perSec;
    const b = await boot(place, REBUILD_WIDTH);
    level.boot = b.ms;
    console.log(
      `\nboot with ${REPLAY_EVENTS.toLocaleString('en-US')} events of history: ${b.ms.toFixed(0)} ms ` +
        `(open + tail verification ${b.openMs.toFixed(0)} ms; ${b.streams} snapshots loaded, ${b.tailEvents} tail events replayed, ` +
        `${REBUILD_WIDTH} streams at a time as the session registry does)`,
    );
    for (const width of [1, STREAMS]) console.log(`  the same, ${width === 1 ? 'one stream at a time' : 'all streams at once'}: ${(await boot(place, width)).ms.toFixed(0)} ms`);
  } finally {
    dir.remove();
  }
  if (POSTGRES) {
    await postgres(level);
    nodesBench('cluster.bench.ts', 'event propagation between nodes');
    nodesBench('failover.bench.ts', 'failover', ...(KILLS_AT >= 0 ? ['--kills', ARGS[KILLS_AT + 1]] : []));
  }
}

/** One of the nodes' benches, in a process of its own (it starts service processes and a cluster of its own). */
function nodesBench(script: string, what: string, ...args: string[]): void {
  console.log(`
--- ${what} (bench/${script}) ---`);
  const r = spawnSync(process.execPath, ['-r', '@swc-node/register', join(__dirname, script), ...args], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`bench/${script} failed (exit ${r.status ?? r.signal})`);
}

/** The same appends, fill, replay and boot on a throwaway PostgreSQL cluster (fsync on, unix socket), beside LevelDB's. */
async function postgres(level: { app1: number; app64: number; replay: number; boot: number }): Promise<void> {
  const cluster = await startPgCluster({ durable: true });
  try {
    let lastUrl = '';
    const store: Store = async () => {
      const db = await cluster.createDatabase();
      lastUrl = db.url;
      return { open: () => openPgJournal(db.url), remove: () => db.drop() };
    };
    const version = (await (await cluster.createDatabase()).sql('SHOW server_version'))[0].server_version;
    console.log(`\njournal on PostgreSQL ${String(version)} (throwaway cluster, fsync on, unix socket; one event per append, group-committed)`);
    report('  1 concurrent appender', await journalAppenders(1, 1, store), level.app1, 'LevelDB');
    report('  64 concurrent appenders', await journalAppenders(64, 1, store), level.app64, 'LevelDB');
    const place = await store();
    const tf = performance.now();
    await fill(place, REPLAY_EVENTS);
    console.log(`\nfilled ${REPLAY_EVENTS.toLocaleString('en-US')} events over ${STREAMS} streams in ${((performance.now() - tf) / 1000).toFixed(1)} s (1,000 per append)`);
    // Twice, the second counted: the first reads a cold cache, which the journal's replay after it would not.
    await rawPgScan(lastUrl);
    const raw = await rawPgScan(lastUrl);
    report('  raw keyset pages of 4096 rows + JSON.parse', raw, null);
    const replay = await journalReplay(place);
    report('  journal full replay with hash-chain verification', replay.perSec, raw, 'raw scan');
    also(replay.perSec, level.replay, 'LevelDB');
    const b = await boot(place, REBUILD_WIDTH);
    console.log(
      `\nboot with ${REPLAY_EVENTS.toLocaleString('en-US')} events of history: ${b.ms.toFixed(0)} ms, LevelDB ${level.boot.toFixed(0)} ms ` +
        `(open + migrations + tail verification ${b.openMs.toFixed(0)} ms; ${b.streams} snapshots loaded, ${b.tailEvents} tail events replayed, ` +
        `${REBUILD_WIDTH} streams at a time)`,
    );
    await place.remove();
  } finally {
    cluster.stop();
  }
}

/** What the database gives the journal's scan at most: the same keyset query, each record's JSON parsed. */
async function rawPgScan(url: string): Promise<number> {
  const pool = new Pool({ connectionString: url, max: 1 });
  let count = 0;
  const t0 = performance.now();
  for (let seq = 1; ; ) {
    const { rows } = await pool.query<[string, string]>({
      text: 'SELECT seq, hash || prev_hash || body FROM brainstem_events WHERE seq >= $1 ORDER BY seq LIMIT 4096',
      values: [seq],
      rowMode: 'array',
    });
    if (rows.length === 0) break;
    for (const r of rows) JSON.parse(recordBody(r[1]));
    count += rows.length;
    seq = Number(rows[rows.length - 1][0]) + 1;
  }
  const perSec = rate(count, performance.now() - t0);
  await pool.end();
  return perSec;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
