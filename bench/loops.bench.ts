// npm run bench:loops [passes] — what loop detection costs per event.
// 1. The detector alone: every observation of the corpus of normal sessions (test/fixtures/loops/corpus, as the
//    runtimes' parsers read it), `passes` times over (default 200), each observe() timed; and a worker going round in
//    circles (the same failing call again and again), whose detection is answered once and then cools down, as live.
// 2. The session path: the same recordings, each replayed once by its own session (passes / 20 sessions per recording):
//    every tool call and result reported by the worker to its session (RuntimeSink.report, the session's mailbox,
//    SessionLoops, the detector) in the whole service, one at a time, each timed until the mailbox has taken it; beside
//    the same path with every pattern off (BRAINSTEM_LOOP_*=0), where no detector is made.
// 3. Signals over HTTP as bench:sessions sends them (1,000 sessions, 50 keep-alive connections, worker credentials,
//    report_progress), to two services side by side, one with detectors and one without, in alternating batches so
//    the machine's load falls on both alike: signals/s of each, and the ratio.
// bench:sessions -- N --no-loops gives a whole run of bench:sessions without detectors, beside its default run.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gc } from './gc';
import { load } from './http-load';
import { InertRuntime } from '../test/support/inert-runtime';
import { TestApp } from '../test/support/test-app';
import { LoopDetector, LoopObservation } from '../src/sessions/loops/loop-detector';
import { DEFAULT_LOOP_THRESHOLDS } from '../src/sessions/loops/loop-thresholds';
import { claudeActivity } from '../src/sessions/runtimes/claude-code.runtime';
import { codexProtocol } from '../src/sessions/runtimes/codex.runtime';
import { geminiProtocol } from '../src/sessions/runtimes/gemini-cli.runtime';
import { opencodeProtocol } from '../src/sessions/runtimes/opencode.runtime';
import { RuntimeCatalog } from '../src/sessions/runtimes/runtime-catalog';
import { LaunchSpec, Recovery, RuntimeSink, SessionRuntime, WorkerActivity, WorkerHandle } from '../src/sessions/runtimes/runtime.port';
import { Turn, TurnProtocol } from '../src/sessions/runtimes/turn-conversation';
import { SessionRegistry } from '../src/sessions/session.registry';
import { SessionActor } from '../src/sessions/session.actor';
import { SessionLoops } from '../src/sessions/loops/session-loops';
import { startTestApp } from '../test/support/test-app';

const PASSES = Number(process.argv[2] ?? 200);
/** As bench:sessions: the journal's fsync, on unless BRAINSTEM_JOURNAL_SYNC=false. */
const SYNC = process.env.BRAINSTEM_JOURNAL_SYNC ?? 'true';
const CORPUS = join(__dirname, '../test/fixtures/loops/corpus');
const PROTOCOLS: Record<string, TurnProtocol> = { codex: codexProtocol, 'gemini-cli': geminiProtocol, opencode: opencodeProtocol };
const OFF = { BRAINSTEM_LOOP_REPEATED_CALL: '0', BRAINSTEM_LOOP_ALTERNATION: '0', BRAINSTEM_LOOP_REPEATED_FAILURE: '0', BRAINSTEM_LOOP_REPEATED_TEXT: '0', BRAINSTEM_LOOP_NO_PROGRESS_S: '0' };

type Line = { turn: number; event: Record<string, unknown> };

/** Each recorded session's activity (tool calls and results), as its runtime's parser reports it. */
function corpusActivity(): WorkerActivity[][] {
  return readdirSync(CORPUS)
    .filter((f) => f.endsWith('.jsonl'))
    .map((file) => {
      const runtime = file.split('--')[0];
      const lines = readFileSync(join(CORPUS, file), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Line);
      if (runtime === 'claude-code') return lines.flatMap(({ event }) => claudeActivity(event));
      const out: WorkerActivity[] = [];
      const turn = new Turn(undefined, (a) => out.push(a));
      for (const { event } of lines) PROTOCOLS[runtime].read(event, turn);
      return out;
    });
}

const q = (xs: number[], p: number): number => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))];
function line(label: string, us: number[]): { p50: number; p99: number } {
  us.sort((a, b) => a - b);
  const mean = us.reduce((a, b) => a + b, 0) / us.length;
  const r = { p50: q(us, 0.5), p99: q(us, 0.99) };
  console.log(`${label.padEnd(52)} ${us.length.toLocaleString('en-US').padStart(9)} events   p50 ${r.p50.toFixed(2).padStart(6)} µs   p99 ${r.p99.toFixed(2).padStart(6)} µs   mean ${mean.toFixed(2).padStart(6)} µs`);
  return r;
}

/** The detector alone on a stream of observations, each call timed; how many detections it answered. */
function detectorAlone(stream: LoopObservation[], cooling: boolean): { us: number[]; detections: number } {
  const detector = new LoopDetector(DEFAULT_LOOP_THRESHOLDS);
  const until = new Map<string, number>();
  const us: number[] = [];
  let detections = 0;
  for (const o of stream) {
    const t0 = performance.now();
    const d = detector.observe(o, (p) => cooling && (until.get(p) ?? -Infinity) > o.at);
    us.push((performance.now() - t0) * 1000);
    if (d) {
      detections++;
      until.set(d.pattern, o.at + DEFAULT_LOOP_THRESHOLDS.cooldown_s * 1000);
    }
  }
  return { us, detections };
}

/** A process-less worker whose sink the bench reports through, as a runtime's parser does. */
class ReportingRuntime implements SessionRuntime {
  readonly name = 'reporting';
  readonly takesCommand = false;
  readonly executable = null;
  readonly processPerTurn = true;
  readonly sinks = new Map<string, RuntimeSink>();

  startsIdle(): boolean {
    return false;
  }

  start(spec: LaunchSpec, sink: RuntimeSink): WorkerHandle {
    this.sinks.set(spec.session_id, sink);
    return { pid: null, startTime: null, attachment: 'attached', canReceive: () => true, send: () => undefined, resolvePermission: () => undefined, signal: () => false, release: () => undefined };
  }

  recover(): Recovery {
    return null;
  }
}

/**
 * `copies` sessions per recording, each replaying it once (a detector that saw a recording already would find its
 * second run a loop), one activity at a time, each timed until its session's mailbox took it.
 */
async function sessionPath(env: Record<string, string>, recordings: WorkerActivity[][], copies: number): Promise<{ us: number[]; detections: number; actors: SessionActor[] }> {
  const t = await startTestApp(env);
  try {
    const runtime = new ReportingRuntime();
    t.app.get(RuntimeCatalog).register(runtime);
    const registry = t.app.get(SessionRegistry);
    const replays: Array<{ id: string; recording: WorkerActivity[] }> = [];
    for (let copy = 0; copy < copies; copy++) {
      for (const recording of recordings) {
        const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'reporting', cwd: process.cwd(), title: `replay ${replays.length}` } });
        if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`);
        replays.push({ id: res.json().id, recording });
      }
    }
    await gc();
    const us: number[] = [];
    for (const { id, recording } of replays) {
      const actor = registry.get(id);
      const sink = runtime.sinks.get(id) as RuntimeSink;
      for (const activity of recording) {
        const t0 = performance.now();
        sink.report({ kind: 'activity', activity });
        await actor.run(() => undefined);
        us.push((performance.now() - t0) * 1000);
      }
    }
    const ids = replays.map((r) => r.id);
    const detections = ids.reduce((n, id) => n + (registry.get(id).context.loop ? 1 : 0), 0);
    return { us, detections, actors: ids.map((id) => registry.get(id)) };
  } finally {
    await t.close();
  }
}

/** A service with 1,000 process-less sessions, and the signals bench:sessions sends them. */
async function signalling(env: Record<string, string>): Promise<{ t: TestApp; requests: Array<{ path: string; token: string; body: string }> }> {
  const t = await startTestApp({ BRAINSTEM_MAX_SESSIONS: '2000', BRAINSTEM_JOURNAL_SYNC: SYNC, ...env }, { listen: true });
  t.app.get(RuntimeCatalog).register(new InertRuntime());
  const statuses = ['working', 'completed', 'needs_review', 'working'];
  const requests: Array<{ path: string; token: string; body: string }> = [];
  for (let i = 0; i < 1000; i++) {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'inert', cwd: process.cwd(), title: `bench ${i}` } });
    if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`);
    const id: string = res.json().id;
    requests.push({ path: `/api/v1/coding-sessions/${id}/signals`, token: t.tokenOf({ worker: id }), body: JSON.stringify({ type: 'report_progress', status: statuses[i % 4], message: `tick from ${i}` }) });
  }
  return { t, requests };
}

async function signalsSideBySide(rounds: number, batch: number): Promise<void> {
  const services = { on: await signalling({}), off: await signalling(OFF) };
  const rates: Record<'on' | 'off', number[]> = { on: [], off: [] };
  try {
    const send = async (which: 'on' | 'off', total: number) => {
      const { t, requests } = services[which];
      const r = await load({ url: t.url, method: 'POST', total, connections: 50, requests, expect: 200 });
      return (r.requests / r.ms) * 1000;
    };
    await send('on', 2000);
    await send('off', 2000);
    for (let round = 0; round < rounds; round++) {
      for (const which of round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) rates[which].push(await send(which, batch));
    }
  } finally {
    await services.on.t.close();
    await services.off.t.close();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const fmt = (xs: number[]) => `median ${Math.round(median(xs)).toLocaleString('en-US')} signals/s (batches ${Math.round(Math.min(...xs)).toLocaleString('en-US')}–${Math.round(Math.max(...xs)).toLocaleString('en-US')})`;
  console.log(`signals over HTTP, ${rounds} alternating batches of ${batch.toLocaleString('en-US')} each, journal fsync ${SYNC === 'true' ? 'on' : 'off'}`);
  console.log(`  with detectors      ${fmt(rates.on)}`);
  console.log(`  without (loops off) ${fmt(rates.off)}`);
  const paired = rates.on.map((r, i) => r / rates.off[i]).sort((a, b) => a - b);
  console.log(`  with / without: median of the paired batches ${(paired[Math.floor(paired.length / 2)] * 100).toFixed(1)}% (a drop of ${(100 - paired[Math.floor(paired.length / 2)] * 100).toFixed(1)}%)`);
}

async function main(): Promise<void> {
  const recordings = corpusActivity();
  const events = recordings.reduce((n, r) => n + r.length, 0);
  console.log(`loops bench: ${recordings.length} recorded sessions, ${events} tool calls and results; the detector ${PASSES} passes over them`);

  // 1. The detector alone. Each pass is a fresh detector per session (a worker's own), times 20 s apart.
  const corpusStream = (pass: number) =>
    recordings.map((r) => r.map((a, k) => ({ ...a, at: Date.parse('2026-11-26T09:00:00Z') + pass * 1e9 + k * 20_000 }) as LoopObservation));
  for (let pass = 0; pass < 20; pass++) for (const s of corpusStream(pass)) detectorAlone(s, true);
  const normal: number[] = [];
  let normalDetections = 0;
  for (let pass = 0; pass < PASSES; pass++) {
    for (const s of corpusStream(pass)) {
      const r = detectorAlone(s, true);
      normal.push(...r.us);
      normalDetections += r.detections;
    }
  }
  line('detector alone, the corpus (normal work)', normal);
  console.log(`  detections on the corpus: ${normalDetections}`);
  const looping: LoopObservation[] = Array.from({ length: 20_000 }, (_, k) =>
    k % 2 === 0
      ? { kind: 'tool_call', at: k * 1000, call_id: `c${k}`, tool: 'Bash', input: { command: 'npm run build', description: 'build' } }
      : { kind: 'tool_result', at: k * 1000, call_id: `c${k - 1}`, ok: false, exit_code: 2, output: 'src/x.ts(3,1): error TS2304: Cannot find name foo.\nFound 1 error in 3.2s' },
  );
  const loopRun = detectorAlone(looping, true);
  line('detector alone, a worker going round in circles', loopRun.us);
  console.log(`  detections: ${loopRun.detections} (each pattern once per cooldown of ${DEFAULT_LOOP_THRESHOLDS.cooldown_s} s)`);

  // 2. The session path, with and without detectors, in alternating order.
  const sessionPasses = Math.max(1, Math.round(PASSES / 20));
  const MAX_SESSIONS = String(recordings.length * sessionPasses + 10);
  const env = { BRAINSTEM_MAX_SESSIONS: MAX_SESSIONS };
  await sessionPath(env, recordings, 1);
  const on: number[] = [];
  const off: number[] = [];
  let onDetections = 0;
  for (let round = 0; round < 2; round++) {
    const a = await sessionPath(env, recordings, sessionPasses);
    on.push(...a.us);
    onDetections += a.detections;
    off.push(...(await sessionPath({ ...env, ...OFF }, recordings, sessionPasses)).us);
  }
  const withIt = line('session path: report → mailbox → detector', on);
  const without = line('session path without it (BRAINSTEM_LOOP_* = 0)', off);
  console.log(`  sessions with a loop detected on the session path: ${onDetections}`);
  console.log(`  the detector adds p50 ${(withIt.p50 - without.p50).toFixed(2)} µs, p99 ${(withIt.p99 - without.p99).toFixed(2)} µs per event on the session path`);

  // What a signal adds: its journaled facts shown to the session's loops (the command path's observer), a progress
  // report the one fact bench:sessions sends: timed on live sessions, with detectors and with every pattern off.
  const { actors } = await sessionPath(env, recordings, 1);
  const progress = (loops: SessionLoops) => {
    const us: number[] = [];
    for (let k = 0; k < 20_000; k++) {
      const actor = actors[k % actors.length];
      const fact = { type: 'session.progress' as const, at: Date.now(), status: 'working' as const, message: `tick ${k % 4}` };
      const t0 = performance.now();
      void loops.facts(actor, [fact]);
      us.push((performance.now() - t0) * 1000);
    }
    return us;
  };
  const noCommand = async () => undefined;
  progress(new SessionLoops(DEFAULT_LOOP_THRESHOLDS, Date.now, noCommand));
  line("a signal's facts → SessionLoops (report_progress)", progress(new SessionLoops(DEFAULT_LOOP_THRESHOLDS, Date.now, noCommand)));
  line('the same, every pattern off', progress(new SessionLoops({ ...DEFAULT_LOOP_THRESHOLDS, repeated_call: 0, alternation: 0, repeated_failure: 0, repeated_text: 0, no_progress_s: 0 }, Date.now, noCommand)));

  // 3. Signals side by side.
  await signalsSideBySide(20, 3000);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
