// npm run bench:brain [-- --turns N] — a chat message to the hosted main brain's first streamed text, through Brainstem
// and straight to the same claude, in one run against a fake Anthropic API that answers at once.
// Brainstem: POST /main-brain/messages → the turn's first chat.delta (and its chat.message) on the chat SSE.
// Direct: the same claude binary with the arguments, environment and directory Brainstem gave its brain, a stream-json
// user message with the same prompt written to its stdin → the first text_delta stream_event on its stdout.
// One cold turn each (the claude process starts), then N warm turns each, alternating so both see the same load.
import { ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, symlinkSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { delimiter, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { filter, firstValueFrom } from 'rxjs';
import { EventBus } from '../src/bus/event-bus';
import { brainTurnPrompt } from '../src/main-brain/agent/brain-conversation';
import { PROCESS_RUNNER, ProcessRunner, SpawnSpec, WorkerProcess } from '../src/sessions/runtimes/process-runner';
import { FakeAnthropicApi } from '../test/support/fake-anthropic-api';
import { SseConnection, openSse } from '../test/support/sse';
import { tempDir } from '../test/support/temp-dir';
import { TestApp, startTestApp } from '../test/support/test-app';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const TURNS = Number(arg('--turns') ?? 50);
const REPLY = 'Noted.';
/** A turn that has not shown its text by then is a failure, not a wait (the cold one starts claude). */
const TURN_DEADLINE_MS = 120_000;
const BASE = '/api/v1/session-os/main-brain';

/** The claude to measure: BRAINSTEM_REAL_CLAUDE, else the first `claude` on PATH. */
function findClaude(): string | null {
  const pinned = process.env.BRAINSTEM_REAL_CLAUDE;
  if (pinned) return existsSync(pinned) ? pinned : null;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'claude'))) return join(dir, 'claude');
  }
  return null;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** One turn's times from its start (ms): the first streamed text, and the first complete message. */
interface TurnTimes {
  first_text: number;
  message: number;
}

/** Where Brainstem's time goes in one turn, each from the POST (ms). */
interface Breakdown {
  user_journaled: number;
  turn_started_journaled: number;
  written_to_claude: number;
  claude_first_text: number;
  sse_first_text: number;
}

function post(url: string, token: string, body: object, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(url, { method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const withDeadline = <T>(p: Promise<T>, what: string): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing within ${TURN_DEADLINE_MS} ms`)), TURN_DEADLINE_MS).unref())]);

/** The brain's claude as Brainstem drives it, seen from outside: HTTP in, SSE out; and inside, where the time went. */
class ThroughBrainstem {
  private seq = 0;
  private readonly agent = new Agent({ keepAlive: true });
  /** The last claude Brainstem spawned for its brain, with the spec it used. */
  spawned: { spec: SpawnSpec; proc: WorkerProcess } | null = null;
  private marks: Partial<Record<keyof Breakdown, number>> = {};

  constructor(
    private readonly t: TestApp,
    private readonly sse: SseConnection,
  ) {
    // The runner is wrapped, not replaced: the real spawn runs; the bench keeps the spec and watches the pipes.
    const runner = t.app.get<ProcessRunner>(PROCESS_RUNNER);
    const spawnReal = runner.spawn.bind(runner);
    runner.spawn = (spec) => {
      const proc = spawnReal(spec);
      this.spawned = { spec, proc };
      const write = proc.stdin.write.bind(proc.stdin) as (chunk: string) => boolean;
      proc.stdin.write = ((chunk: string) => {
        this.marks.written_to_claude ??= performance.now();
        return write(chunk);
      }) as typeof proc.stdin.write;
      proc.stdout.on('data', (c: Buffer | string) => {
        if (String(c).includes('"text_delta"')) this.marks.claude_first_text ??= performance.now();
      });
      return proc;
    };
    const bus = t.app.get(EventBus);
    // The bus's event map does not list the brain's events: its types are compared as strings.
    bus.events$.subscribe((e) => {
      const type: string = e.type;
      if (type === 'chat.message' && (e.data as { role?: string }).role === 'user') this.marks.user_journaled ??= performance.now();
      if (type === 'brain.turn_started') this.marks.turn_started_journaled ??= performance.now();
    });
  }

  /** The chat's seq the next user message will take (the prompt names it). */
  nextSeq(): number {
    return this.seq + 1;
  }

  async turn(text: string): Promise<{ times: TurnTimes; breakdown: Breakdown }> {
    const bus = this.t.app.get(EventBus);
    const ended = firstValueFrom(bus.events$.pipe(filter((e) => (e.type as string) === 'brain.turn_ended')));
    this.marks = {};
    const t0 = performance.now();
    const status = await post(`${this.t.url}${BASE}/messages`, this.t.token, { text }, this.agent);
    if (status !== 201) throw new Error(`POST ${BASE}/messages answered ${status}`);
    let firstText: number | null = null;
    let message: number | null = null;
    while (message === null) {
      const [ev] = await withDeadline(this.sse.take(1, TURN_DEADLINE_MS), 'the chat stream');
      const at = performance.now();
      const parsed = JSON.parse(ev.data || '{}') as { data?: { role?: string; kind?: string } } & { turn_id?: string };
      if (ev.event === 'chat.delta') firstText ??= at;
      else if (ev.event === 'chat.message') {
        if (parsed.data?.role === 'user') this.seq = Number(ev.id);
        else if (parsed.data?.role === 'brain' && parsed.data.kind === 'message') message = at;
        else if (parsed.data?.role === 'system') throw new Error(`the chat says: ${ev.data}`);
      }
    }
    const end = (await withDeadline(ended, 'brain.turn_ended')).data as { outcome: string; reason: string | null };
    if (end.outcome !== 'completed') throw new Error(`the brain's turn failed: ${end.reason}`);
    if (firstText === null) throw new Error('the turn ended without a chat.delta');
    const m = this.marks;
    const rel = (k: keyof Breakdown) => (m[k] ?? NaN) - t0;
    return {
      times: { first_text: firstText - t0, message: message - t0 },
      breakdown: {
        user_journaled: rel('user_journaled'),
        turn_started_journaled: rel('turn_started_journaled'),
        written_to_claude: rel('written_to_claude'),
        claude_first_text: rel('claude_first_text'),
        sse_first_text: firstText - t0,
      },
    };
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The same claude, with the same arguments, environment and directory, driven over its pipes by the bench itself. */
class Direct {
  private proc: ChildProcessWithoutNullStreams | null = null;
  private buf = '';
  private waiting: { firstText: number | null; message: number | null; done: (r: TurnTimes) => void; fail: (e: Error) => void } | null = null;
  private stderr = '';

  constructor(private readonly spec: SpawnSpec) {}

  turn(prompt: string): Promise<TurnTimes> {
    const t0 = performance.now();
    if (!this.proc) this.start();
    const result = new Promise<TurnTimes>((resolve, reject) => {
      this.waiting = {
        firstText: null,
        message: null,
        done: (r) => resolve({ first_text: r.first_text - t0, message: r.message - t0 }),
        fail: reject,
      };
    });
    this.proc!.stdin.write(JSON.stringify({ type: 'user', uuid: randomUUID(), message: { role: 'user', content: prompt } }) + '\n');
    return withDeadline(result, 'direct claude');
  }

  async close(): Promise<void> {
    const proc = this.proc;
    this.proc = null;
    if (!proc || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => {
        proc.kill('SIGKILL');
        resolve();
      }, 10_000);
      proc.on('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      proc.stdin.end();
    });
  }

  private start(): void {
    const proc = spawn(this.spec.command, this.spec.args, { cwd: this.spec.cwd, env: this.spec.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc = proc;
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (c: string) => {
      const at = performance.now();
      this.buf += c;
      let i: number;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        this.onLine(line, at);
      }
    });
    proc.stderr.on('data', (c: Buffer) => (this.stderr = (this.stderr + c.toString('utf8')).slice(-2000)));
    proc.on('exit', (code, signal) => this.waiting?.fail(new Error(`direct claude exited (${signal ?? code}): ${this.stderr.trim()}`)));
  }

  private onLine(line: string, at: number): void {
    const w = this.waiting;
    if (!w || !line.startsWith('{')) return;
    const msg = JSON.parse(line) as { type?: string; is_error?: boolean; result?: string; event?: { type?: string; delta?: { type?: string } }; message?: { model?: string } };
    if (msg.type === 'stream_event' && msg.event?.type === 'content_block_delta' && msg.event.delta?.type === 'text_delta') w.firstText ??= at;
    else if (msg.type === 'assistant' && msg.message?.model !== '<synthetic>') w.message ??= at;
    else if (msg.type === 'result') {
      this.waiting = null;
      if (msg.is_error) w.fail(new Error(`direct claude's turn failed: ${msg.result}`));
      else if (w.firstText === null || w.message === null) w.fail(new Error('direct claude ended its turn without streamed text'));
      else w.done({ first_text: w.firstText, message: w.message });
    }
  }
}

async function main(): Promise<void> {
  const claude = findClaude();
  if (!claude) {
    const pinned = process.env.BRAINSTEM_REAL_CLAUDE;
    console.error(
      `bench:brain needs a real claude: ${pinned ? `BRAINSTEM_REAL_CLAUDE=${pinned} does not exist` : 'set BRAINSTEM_REAL_CLAUDE to its path or put `claude` on PATH'}.\n` +
        'To fetch the pinned versions and set BRAINSTEM_REAL_CLAUDE: eval "$(bash .ci/real-clis)"',
    );
    process.exit(2);
  }
  if (!Number.isInteger(TURNS) || TURNS < 1) throw new Error(`--turns: a whole number ≥ 1, got ${arg('--turns')}`);
  const version = execFileSync(claude, ['--version'], { encoding: 'utf8' }).trim();
  const dirs = { bin: tempDir('bench-brain-bin-'), home: tempDir('bench-brain-home-'), data: tempDir('bench-brain-data-') };
  symlinkSync(claude, join(dirs.bin.path, 'claude'));
  const api = new FakeAnthropicApi(() => ({ text: REPLY }));
  api.releaseAll();
  // The brain's claude inherits the service's environment (and the direct one gets the brain's): the fake API, a fresh HOME.
  Object.assign(process.env, {
    PATH: `${dirs.bin.path}${delimiter}${process.env.PATH}`,
    HOME: dirs.home.path,
    ANTHROPIC_BASE_URL: await api.start(),
    ANTHROPIC_API_KEY: 'sk-ant-fake',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  });
  const t = await startTestApp(
    { BRAINSTEM_MAIN_BRAIN_DRIVER: 'agent', BRAINSTEM_MAIN_BRAIN_RUNTIME: 'claude-code', BRAINSTEM_JOURNAL_DIR: join(dirs.data.path, 'journal') },
    { listen: true },
  );
  const sse = await openSse(`${t.url}${BASE}/messages/stream`, t.auth());
  const bs = new ThroughBrainstem(t, sse);
  let direct: Direct | null = null;
  console.log(`brain bench: ${version} (${claude}), fake model API answering at once with "${REPLY}", ${TURNS} warm turns after a cold one, journal fsync ${t.config.journal.sync ? 'on' : 'off'}`);
  try {
    const rows: { bs: TurnTimes[]; direct: TurnTimes[]; breakdown: Breakdown[] } = { bs: [], direct: [], breakdown: [] };
    for (let i = 0; i <= TURNS; i++) {
      const text = `bench message ${i}`;
      // Direct gets the prompt Brainstem builds for that message (one user message, its chat seq named).
      const prompt = brainTurnPrompt({ seed: null, round: null, chats: [{ seq: bs.nextSeq(), role: 'user', text, session_id: null }] });
      const b = await bs.turn(text);
      if (!direct) {
        if (!bs.spawned) throw new Error('Brainstem answered without spawning a claude');
        direct = new Direct(bs.spawned.spec);
      }
      const d = await direct.turn(prompt);
      rows.bs.push(b.times);
      rows.direct.push(d);
      rows.breakdown.push(b.breakdown);
    }
    report(rows);
  } finally {
    sse.close();
    bs.close();
    await direct?.close();
    await t.close();
    await api.close();
    for (const d of Object.values(dirs)) d.remove();
  }
}

function report(rows: { bs: TurnTimes[]; direct: TurnTimes[]; breakdown: Breakdown[] }): void {
  const f = (x: number) => `${x.toFixed(1)} ms`.padStart(10);
  const warm = <T>(xs: T[]) => xs.slice(1);
  const line = (name: string, xs: number[]) => console.log(`  ${name.padEnd(42)}${f(pct(xs, 50))}${f(pct(xs, 99))}${f(mean(xs))}`);
  console.log(`\n${`warm turns (${rows.bs.length - 1})`.padEnd(44)}       p50       p99      mean`);
  const bsFirst = warm(rows.bs).map((r) => r.first_text);
  const dFirst = warm(rows.direct).map((r) => r.first_text);
  line('first text, Brainstem (chat.delta)', bsFirst);
  line('first text, direct (text_delta)', dFirst);
  const over = (p: number) => pct(bsFirst, p) - pct(dFirst, p);
  console.log(`  ${'overhead'.padEnd(42)}${f(over(50))}${f(over(99))}${f(mean(bsFirst) - mean(dFirst))}`);
  console.log(
    `  ${'ratio'.padEnd(42)}${`${(pct(bsFirst, 50) / pct(dFirst, 50)).toFixed(2)}x`.padStart(10)}${`${(pct(bsFirst, 99) / pct(dFirst, 99)).toFixed(2)}x`.padStart(10)}${`${(mean(bsFirst) / mean(dFirst)).toFixed(2)}x`.padStart(10)}`,
  );
  line('first message, Brainstem (chat.message)', warm(rows.bs).map((r) => r.message));
  line('first message, direct (assistant)', warm(rows.direct).map((r) => r.message));
  const allowed = Math.max(0.1 * pct(dFirst, 99), 50);
  const meets = over(99) <= allowed;
  console.log(`\ntarget: Brainstem adds ≤ 10% or ≤ 50 ms at p99, whichever is larger (here ≤ ${allowed.toFixed(1)} ms): ${meets ? 'MET' : 'MISSED'} (adds ${over(99).toFixed(1)} ms)`);
  console.log(`\n${'cold first turn (claude starts)'.padEnd(44)} Brainstem    direct`);
  console.log(`  ${'first text'.padEnd(42)}${f(rows.bs[0].first_text)}${f(rows.direct[0].first_text)}`);
  console.log(`  ${'first message'.padEnd(42)}${f(rows.bs[0].message)}${f(rows.direct[0].message)}`);
  console.log(`\n${"where Brainstem's warm time goes, from the POST".padEnd(44)}       p50       p99`);
  const stages: Array<[keyof Breakdown, string]> = [
    ['user_journaled', 'user message journaled + published'],
    ['turn_started_journaled', 'brain.turn_started journaled'],
    ['written_to_claude', "prompt written to claude's stdin"],
    ['claude_first_text', 'first text_delta on its stdout'],
    ['sse_first_text', 'chat.delta read from the SSE'],
  ];
  for (const [k, name] of stages) {
    const xs = warm(rows.breakdown).map((b) => b[k]);
    console.log(`  ${name.padEnd(42)}${f(pct(xs, 50))}${f(pct(xs, 99))}`);
  }
  const inClaude = warm(rows.breakdown).map((b) => b.claude_first_text - b.written_to_claude);
  console.log(`  ${'claude alone (stdin → text_delta), hosted'.padEnd(42)}${f(pct(inClaude, 50))}${f(pct(inClaude, 99))}`);
  console.log(`  ${'claude alone (stdin → text_delta), direct'.padEnd(42)}${f(pct(dFirst, 50))}${f(pct(dFirst, 99))}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
