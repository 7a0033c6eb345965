// npm run bench:memory [sessions…] — memory and boot after sessions have come and gone (default 1,000 and 10,000).
// For each count, one process runs the service (LevelDB journal, fsync off: this measures memory, not writes),
// creates that many sessions (a process-less worker that takes its prompt and exits), waits until retention has
// let them go, and measures its heap; then a fresh process boots on that journal and measures boot time, memory
// and the journal reads boot made. The baseline is the same on an empty journal, in the same run. The largest
// count is run a second time with the filling process killed instead of shut down (no shutdown snapshot).
// Prints figures, asserts nothing.
import { spawnSync } from 'node:child_process';
import { gc } from './gc';
import { EventJournal } from '../src/journal/event-journal';
import { SessionRegistry } from '../src/sessions/session.registry';
import { RuntimeCatalog } from '../src/sessions/runtimes/runtime-catalog';
import { LaunchSpec, Recovery, RuntimeSink, SessionRuntime, WorkerHandle } from '../src/sessions/runtimes/runtime.port';
import { InertRuntime } from '../test/support/inert-runtime';
import { startTestApp } from '../test/support/test-app';
import { tempDir } from '../test/support/temp-dir';

const RETENTION_S = 1;
const CONCURRENCY = 16;


const env = (dir: string, extra: Record<string, string> = {}) => ({
  BRAINSTEM_JOURNAL_DIR: dir,
  BRAINSTEM_JOURNAL_SYNC: 'false',
  BRAINSTEM_RETENTION_S: String(RETENTION_S),
  BRAINSTEM_MAX_SESSIONS: '100000',
  ...extra,
});

/** A process-less worker that exits once it has its prompt, as a one-shot job does. */
class OneShotRuntime implements SessionRuntime {
  readonly name = 'one-shot';
  readonly takesCommand = false;
  readonly executable = null;
  readonly processPerTurn = true;
  private readonly inert = new InertRuntime();

  startsIdle(): boolean {
    return false;
  }

  start(spec: LaunchSpec, sink: RuntimeSink): WorkerHandle {
    const worker = this.inert.start(spec, sink);
    return { ...worker, send: () => void worker.signal('SIGTERM') };
  }

  recover(): Recovery {
    return null;
  }
}

interface FillResult {
  fill_ms: number;
  in_memory: number;
  heap_growth: number;
}

interface BootResult {
  boot_ms: number;
  in_memory: number;
  rss: number;
  heap: number;
  stream_reads: number;
  events_read: number;
  snapshots_loaded: number;
}

/** Child: fills the journal in `dir` with `count` sessions that come and go, then shuts down (or dies). */
async function fill(dir: string, count: number, crash: boolean): Promise<FillResult> {
  const t = await startTestApp(env(dir));
  t.app.get(RuntimeCatalog).register(new OneShotRuntime());
  const registry = t.app.get(SessionRegistry);
  await gc();
  const before = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const payload = { runtime: 'one-shot', cwd: process.cwd(), title: `bench ${i}`, prompt: `job ${i}` };
      const created = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload });
      if (created.statusCode !== 201) throw new Error(`create answered ${created.statusCode}: ${created.body}`);
      await registry.get(created.json().id as string).whenExited();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  const fillMs = performance.now() - t0;
  // Retention lets them go; a version without retention keeps them (then the wait gives up).
  const deadline = Date.now() + (RETENTION_S + 10) * 1000;
  while (registry.list().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await gc();
  const result = { fill_ms: fillMs, in_memory: registry.list().length, heap_growth: process.memoryUsage().heapUsed - before };
  if (crash) {
    process.stdout.write(JSON.stringify(result) + '\n');
    process.kill(process.pid, 'SIGKILL');
  }
  await t.close().catch(() => undefined);
  return result;
}

/** Child: boots the service on `dir` and measures it, counting the journal reads boot makes. */
async function boot(dir: string): Promise<BootResult> {
  let streamReads = 0;
  let eventsRead = 0;
  let snapshots = 0;
  const readStream = EventJournal.prototype.readStream;
  EventJournal.prototype.readStream = async function (this: EventJournal, ...args: Parameters<typeof readStream>) {
    streamReads++;
    const events = await readStream.apply(this, args);
    eventsRead += events.length;
    return events;
  };
  const loadSnapshot = EventJournal.prototype.loadSnapshot;
  EventJournal.prototype.loadSnapshot = async function <T>(this: EventJournal, stream: string) {
    const snap = await loadSnapshot.call(this, stream);
    if (snap) snapshots++;
    return snap as never as Awaited<ReturnType<typeof loadSnapshot<T>>>;
  };
  await gc();
  const t0 = performance.now();
  const t = await startTestApp(env(dir));
  const bootMs = performance.now() - t0;
  const inMemory = t.app.get(SessionRegistry).list().length;
  const reads = { stream_reads: streamReads, events_read: eventsRead, snapshots_loaded: snapshots };
  await gc();
  const mem = process.memoryUsage();
  await t.close();
  return { boot_ms: bootMs, in_memory: inMemory, rss: mem.rss, heap: mem.heapUsed, ...reads };
}

function child<T>(args: string[]): T {
  const res = spawnSync(process.execPath, [...process.execArgv, __filename, ...args], { encoding: 'utf8', maxBuffer: 1 << 24 });
  const line = res.stdout.trim().split('\n').pop() ?? '';
  if (!line.startsWith('{')) throw new Error(`child ${args.join(' ')} failed (${res.status ?? res.signal}):\n${res.stderr}`);
  return JSON.parse(line) as T;
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1).padStart(6)} MB`;
const ms = (x: number) => `${x.toFixed(0).padStart(6)} ms`;

async function main(): Promise<void> {
  const counts = process.argv.slice(2).map(Number);
  const runs: Array<{ label: string; count: number; crash: boolean }> = [{ label: 'empty journal (baseline)', count: 0, crash: false }];
  for (const c of counts.length ? counts : [1000, 10_000]) runs.push({ label: `${c.toLocaleString('en-US')} sessions came and went`, count: c, crash: false });
  const largest = runs[runs.length - 1];
  runs.push({ label: `${largest.count.toLocaleString('en-US')}, filler killed (no shutdown snapshot)`, count: largest.count, crash: true });

  console.log(`memory bench: sessions created with a prompt, their worker exiting once it has it (16 at a time), retention ${RETENTION_S} s; boot in a fresh process`);
  console.log(`${'history'.padEnd(44)} ${'fill'.padStart(9)} ${'kept'.padStart(6)} ${'heap growth'.padStart(11)} | ${'boot'.padStart(9)} ${'rebuilt'.padStart(8)} ${'reads'.padStart(6)} ${'events'.padStart(7)} ${'rss'.padStart(9)} ${'heap'.padStart(9)}`);
  let baseline: BootResult | null = null;
  for (const run of runs) {
    const dir = tempDir('bench-memory-');
    try {
      const filled = run.count > 0 ? child<FillResult>(['fill', dir.path, String(run.count), run.crash ? 'crash' : 'clean']) : null;
      const booted = child<BootResult>(['boot', dir.path]);
      baseline ??= booted;
      console.log(
        `${run.label.padEnd(44)} ${filled ? ms(filled.fill_ms) : '       -'.padStart(9)} ${String(filled?.in_memory ?? '-').padStart(6)} ${filled ? mb(filled.heap_growth).padStart(11) : '-'.padStart(11)} | ` +
          `${ms(booted.boot_ms)} ${String(booted.in_memory).padStart(8)} ${String(booted.stream_reads).padStart(6)} ${String(booted.events_read).padStart(7)} ${mb(booted.rss)} ${mb(booted.heap)}` +
          (run.count > 0 ? `   boot ${(booted.boot_ms / baseline.boot_ms).toFixed(2)}x, rss ${(booted.rss / baseline.rss).toFixed(2)}x the baseline` : ''),
      );
    } finally {
      dir.remove();
    }
  }
  console.log('fill: creating the sessions and seeing them exit; kept: sessions still in memory once retention passed; heap growth: after gc, against before the fill');
  console.log('boot: createApp on the journal; rebuilt: sessions in memory after boot; reads/events: journal stream reads at boot and the events they returned');
}

const [mode, dir, count, how] = process.argv.slice(2);
const job = mode === 'fill' ? fill(dir, Number(count), how === 'crash') : mode === 'boot' ? boot(dir) : null;
(job ?? main().then(() => null)).then(
  (result) => {
    if (result) process.stdout.write(JSON.stringify(result) + '\n');
    process.exit(0);
  },
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
