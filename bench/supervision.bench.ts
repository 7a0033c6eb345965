// npm run bench:supervision [triggers] — the wake pipeline end to end over a real LevelDB journal.
// 1,000 supervised sessions send triggers in bursts; a brain completes each round as soon as it starts.
// Prints rounds started, the merge ratio, latency beyond the debounce window, and triggers lost.
import { performance } from 'node:perf_hooks';
import { filter } from 'rxjs';
import { EventBus } from '../src/bus/event-bus';
import { openLevelJournal } from '../src/journal/journal.factory';
import { JournalEvent } from '../src/journal/journal.port';
import { SupervisionService } from '../src/supervision/supervision.service';
import { MemorySessionDirectory } from '../test/support/memory-session-directory';
import { tempDir } from '../test/support/temp-dir';
// Nearest rank, as the other benches: of 100 rounds the p99 is the 99th (taking floor(0.99 × n) made it the maximum).
import { percentile as pct } from './sse-times';

const TOTAL = Number(process.argv[2] ?? 100_000);
const SESSIONS = 1000;
const BURST = Number(process.env.BENCH_BURST ?? 1000);
const DEBOUNCE_MS = Number(process.env.BENCH_DEBOUNCE_MS ?? 50);
const MAX_TURNS = 1000;
/** A burst whose round has not started and completed by then is a failure, not a wait. */
const BURST_DEADLINE_MS = 30_000;

const KINDS: Array<[string, (m: string) => Record<string, unknown>]> = [
  ['session.progress', (m) => ({ status: 'completed', message: m })],
  ['session.blocked', (m) => ({ reason: m })],
  ['session.asked_human', (m) => ({ question: m })],
  ['session.progress', (m) => ({ status: 'needs_review', message: m })],
];


async function main(): Promise<void> {
  const dir = tempDir('bench-supervision-');
  const journal = await openLevelJournal(dir.path, { sync: true });
  const bus = new EventBus(journal);
  const sessions = new MemorySessionDirectory(journal);
  for (let i = 0; i < SESSIONS; i++) sessions.add(`cs_${String(i).padStart(6, '0')}`);
  let n = 0;
  const svc = new SupervisionService(bus, journal, sessions, { debounce_ms: DEBOUNCE_MS, restore_ttl_s: 900, round_timeout_s: 600 }, Date.now, () => String(++n));
  await svc.start();
  // max_turns is capped at 1,000 (docs/architecture/decisions.md#the-supervision-state-object): a run with more rounds re-enables supervision when it closes.
  await svc.enable({ max_turns: MAX_TURNS }, 'user', 'bench');
  let supervisions = 1;

  const publishedAt = new Map<string, number>();
  const roundStarts: Array<{ at: number; messages: string[] }> = [];
  let completed = 0;
  bus.events$.subscribe((e) => {
    const ev = e as unknown as JournalEvent;
    if (ev.type.startsWith('session.')) {
      const d = ev.data as Record<string, string>;
      publishedAt.set(d.message ?? d.reason ?? d.question, performance.now());
    }
  });
  bus.events$.pipe(filter((e) => e.type === 'round.started')).subscribe((e) => {
    const { round } = e.data as { round: { id: string; reasons: Array<{ message: string | null }> } };
    roundStarts.push({ at: performance.now(), messages: round.reasons.map((r) => r.message ?? '') });
    void svc.completeRound(round.id).then(() => completed++);
  });

  console.log(`supervision bench: ${SESSIONS} supervised sessions, ${TOTAL.toLocaleString('en-US')} triggers in bursts of ${BURST}, debounce ${DEBOUNCE_MS} ms, journal fsync on`);
  const t0 = performance.now();
  let sent = 0;
  while (sent < TOTAL) {
    const size = Math.min(BURST, TOTAL - sent);
    const before = roundStarts.length;
    await Promise.all(
      Array.from({ length: size }, (_, i) => {
        const id = sent + i;
        const [type, data] = KINDS[id % KINDS.length];
        return sessions.emit(`cs_${String(id % SESSIONS).padStart(6, '0')}`, type, data(`t${id}`));
      }),
    );
    sent += size;
    // Next burst once this one's round has started and completed.
    const deadline = performance.now() + BURST_DEADLINE_MS;
    while (roundStarts.length === before || completed < roundStarts.length) {
      if (performance.now() > deadline) throw new Error(`no round completed within ${BURST_DEADLINE_MS} ms of the burst ending at trigger ${sent}`);
      await new Promise((r) => setTimeout(r, 1));
    }
    if (!svc.status().autonomous?.enabled) {
      await svc.enable({ max_turns: MAX_TURNS }, 'user', 'bench');
      supervisions++;
    }
  }
  const elapsed = performance.now() - t0;

  const seen = new Set(roundStarts.flatMap((r) => r.messages));
  const lost = Array.from({ length: TOTAL }, (_, i) => `t${i}`).filter((m) => !seen.has(m)).length;
  const added = roundStarts.map((r) => r.at - Math.max(...r.messages.map((m) => publishedAt.get(m) ?? 0)) - DEBOUNCE_MS);
  console.log(`triggers sent              ${TOTAL.toLocaleString('en-US')} in ${(elapsed / 1000).toFixed(1)} s (${Math.round((TOTAL / elapsed) * 1000).toLocaleString('en-US')} triggers/s journaled and routed)`);
  console.log(`rounds started             ${roundStarts.length} (${supervisions} supervision run${supervisions > 1 ? 's' : ''} of at most ${MAX_TURNS} turns)`);
  console.log(`merge ratio                ${(TOTAL / roundStarts.length).toFixed(1)} triggers per round`);
  console.log(`added latency beyond the debounce window (last trigger of a round → round.started published)`);
  console.log(`                           p50 ${pct(added, 50).toFixed(2)} ms   p99 ${pct(added, 99).toFixed(2)} ms   max ${Math.max(...added).toFixed(2)} ms`);
  console.log(`triggers lost              ${lost}`);
  svc.stop();
  await journal.close();
  dir.remove();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
