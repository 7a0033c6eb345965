// node -r @swc-node/register bench/journal-appenders.ts [appenders] [--null] [--profile out.cpuprofile] — bench:journal's
// closed-loop appenders phase alone (default 64, one event per append, LevelDB with fsync on), for profiling it (a CPU
// profile of the phase alone with --profile: bench/profile-functions.ts reads it), with per group:
// the synced write (storage.commit, from its call to its answer) and the JavaScript between one write's answer and the
// next write's call. --null commits to a storage that only yields to the event loop: what remains is the journal's and
// the appenders' JavaScript alone, as CPU time per event. Prints figures, asserts nothing.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { EventJournal } from '../src/journal/event-journal';
import { ANCHOR_EVERY, CHECK_LEN, CommitBatch, HASH_LEN } from '../src/journal/journal.storage';
import { LevelStorage } from '../src/journal/level.storage';
import { MemoryStorage } from '../src/journal/memory.storage';
import { tempDir } from '../test/support/temp-dir';

const ARGS = process.argv.slice(2);
const APPENDERS = Number(ARGS.find((a, i) => !a.startsWith('--') && !ARGS[i - 1]?.startsWith('--profile')) ?? 64);
const NULL_STORAGE = ARGS.includes('--null');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const STREAMS = 1000;
const PROFILE_AT = ARGS.indexOf('--profile');
const PROFILE = PROFILE_AT >= 0 ? ARGS[PROFILE_AT + 1] : null;

// The payload of bench/journal.bench.ts.
const payload = (i: number) => ({
  session: `cs_${(i % STREAMS).toString(36).padStart(8, '0')}`,
  state: 'pending_handling',
  message: `worker ${i % STREAMS} finished its turn; tests pass; waiting for the next instruction`,
  n: i,
});

/** A memory storage whose commit only yields to the event loop once, as a synced write that took no time would. */
class YieldingStorage extends MemoryStorage {
  readonly syncedCommits = true;
  override async commit(batch: CommitBatch): Promise<void> {
    await super.commit(batch);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const ms = (x: number) => `${x.toFixed(3)} ms`;

async function main(): Promise<void> {
  const dir = tempDir('bench-appenders-');
  const storage = NULL_STORAGE ? new YieldingStorage() : new LevelStorage(dir.path, { sync: true });
  const writes: number[] = [];
  const gaps: number[] = [];
  const sizes: number[] = [];
  // What a group's segment holds, as level.storage.ts writes it: the first record with both hashes, every
  // ANCHOR_EVERYth its own, the others a check of it, '\n'-joined (one segment while a group is at most 64 events).
  let segmentChars = 0;
  let answered = 0;
  const commit = storage.commit.bind(storage);
  storage.commit = async (batch) => {
    const t0 = performance.now();
    if (answered > 0) gaps.push(t0 - answered);
    sizes.push(batch.events.length);
    batch.events.forEach((e, i) => (segmentChars += e.body.length + (i === 0 ? 2 * HASH_LEN : i % ANCHOR_EVERY === 0 ? HASH_LEN + 1 : CHECK_LEN + 1)));
    try {
      return await commit(batch);
    } finally {
      answered = performance.now();
      writes.push(answered - t0);
    }
  };
  const journal = await EventJournal.open(storage);
  let done = 0;
  const session = PROFILE ? new Session() : null;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: APPENDERS }, async (_, w) => {
      while (performance.now() < deadline) {
        await journal.append(`session-w${w}`, [{ type: 'session.state_changed', data: payload(done) }]);
        done += 1;
      }
    }),
  );
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (session && PROFILE) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(PROFILE, JSON.stringify(profile));
    session.disconnect();
  }
  await journal.close();
  dir.remove();
  writes.sort((a, b) => a - b);
  gaps.sort((a, b) => a - b);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`${APPENDERS} appenders, ${NULL_STORAGE ? 'storage that only yields' : 'LevelDB, fsync on'}, ${SECONDS} s`);
  console.log(`  ${Math.round((done / elapsed) * 1000).toLocaleString('en-US')} events/s, ${(done / sizes.length).toFixed(1)} events a group, ${sizes.length} groups`);
  console.log(`  CPU (user + system) ${(((cpu.user + cpu.system) / done)).toFixed(2)} µs an event, ${((cpu.user + cpu.system) / 1000 / elapsed * 100).toFixed(0)}% of one core`);
  console.log(`  events ${done}; a group's segment ${Math.round(segmentChars / sizes.length).toLocaleString('en-US')} characters on average`);
  console.log(`  write  p50 ${ms(pct(writes, 50))}  p90 ${ms(pct(writes, 90))}  p99 ${ms(pct(writes, 99))}  mean ${ms(mean(writes))}`);
  console.log(`  between writes  p50 ${ms(pct(gaps, 50))}  p90 ${ms(pct(gaps, 90))}  p99 ${ms(pct(gaps, 99))}  mean ${ms(mean(gaps))}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
