// npm run bench:scenario [-- --baseline <checkout>] [--rounds N] — one scripted supervision, the same every run, driven
// through a real service and a real claude as the hosted brain, against a fake Anthropic API that plays the brain (it
// calls Brainstem's MCP tools on what each round prompt names) and counts tokens under Anthropic's prompt caching.
// 20 workers: command workers whose turns, questions and permission requests the bench signals, two in worktrees whose
// changes the brain merges, one looping, one with a permission its profile denies, plus two real claude workers on the
// same fake API (one past 80% of its budget), and a third on a subscription whose usage limit refuses its turn once. A
// simulated person confirms what reaches them after a delay. The service restarts once in the middle. With --baseline,
// the same script runs from that checkout too (its own service and round prompt), and the table shows both, the bytes
// of the facts themselves as a lower bound, and the ratios.
// --rounds N (part 3): instead, a long run of N rounds of one worker's turns on a small context budget, to show tokens
// per round stay flat across roll-overs and the kept summary carries the goal.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, symlinkSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { FakeAnthropicApi, MessagesRequest, ModelReply } from '../test/support/fake-anthropic-api';
import { gitRepo } from '../test/support/git-repo';
import { tempDir } from '../test/support/temp-dir';
import { TEST_USER_TOKEN } from '../test/support/test-config';
import { waitFor } from '../test/support/wait-for';
import { WORKERS, stopProcessesOfHome } from '../test/support/workers';
import { CacheUsage, PromptCache, dollarsOf, estimateTokens } from './scenario/prompt-cache';
import { ScenarioBrain, WorkerRole, lastUser } from './scenario/scenario-brain';
import { BrainRequest, JournalRecord, RoundRecord, ScenarioReport, scenarioReport } from './scenario/scenario-metrics';
import { printTable } from './scenario/scenario-table';
import { longRunReport } from './scenario/long-run-metrics';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const HERE = resolve(__dirname, '..');
/** A variant that has not settled by then is reported as such, not waited for. */
const RUN_DEADLINE_MS = Number(arg('--deadline-s') ?? 300) * 1000;
/** How long the simulated person takes to answer what reaches them. */
const PERSON_DELAY_MS = 1500;
/** Between a worker going on and its next scripted step. */
const STEP_GAP_MS = 700;
/** Quiet for this long (no round in flight, none started, nothing pending) and the run has settled. */
const SETTLED_MS = 8000;
/** What each claude worker request reports: its third turn (the brain sends it two) crosses 80% of its budget, not 100%. */
const WORKER_USAGE = { input_tokens: 1000, output_tokens: 100 };
const BUDGET_TOKENS = 3600;
/** A claude worker on a subscription whose turn its usage limit refuses: its requests carry this, and the reset is this far off. */
const LIMITED_MARK = 'the appendix';
const LIMIT_RESET_MS = 6000;

type Json = Record<string, unknown>;

function findClaude(): string | null {
  const pinned = process.env.BRAINSTEM_REAL_CLAUDE;
  if (pinned) return existsSync(pinned) ? pinned : null;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir && existsSync(join(dir, 'claude'))) return join(dir, 'claude');
  return null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The service of one checkout, run as `npm start` would run it, on loopback. */
class Service {
  child: ChildProcess | null = null;
  url = '';
  private out = '';

  constructor(
    private readonly root: string,
    private readonly env: Record<string, string>,
  ) {}

  async start(): Promise<void> {
    this.out = '';
    const child = spawn(process.execPath, ['-r', '@swc-node/register', join(this.root, 'src/main.ts')], { cwd: this.root, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (this.out = (this.out + c).slice(-20_000)));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (this.out = (this.out + c).slice(-20_000)));
    this.url = await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`service exited ${child.exitCode}:\n${this.out}`);
        return /Brainstem listening on (http:\/\/\S+)/.exec(this.out)?.[1];
      },
      { timeoutMs: 90_000, what: 'the service to listen' },
    );
    if (process.env.BENCH_SCENARIO_VERBOSE) console.error(`  service of ${this.root} at ${this.url}`);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(30_000).then(() => child.kill('SIGKILL'))]);
    await exited;
  }

  async call<T = Json>(method: string, path: string, body?: object): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_USER_TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
  }

  async ok<T = Json>(method: string, path: string, body?: object): Promise<T> {
    const res = await this.call<T>(method, path, body);
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }
}

/** A scripted step of a command worker: a signal the bench posts for it, or a change it commits in its worktree. */
type Step = { signal: Json } | { commit: string };

interface Worker {
  role: WorkerRole;
  id: string;
  steps: Step[];
  /** Waiting for the brain (or the person) to let it go on before its next step. */
  waiting: boolean;
  ready_at: number;
}

const turn = (result: string): Step => ({ signal: { type: 'turn_ended', result } });

/**
 * The script: role, how many, in which phase, and each one's steps (n is the worker's number). Phase 2's workers start
 * after the restart: a command worker from before it is detached (alive, reachable by its signals only), so the brain
 * could not send it anything more; the restart comes once no phase-1 worker waits on the brain.
 */
const SCRIPT: Array<{ role: WorkerRole; count: number; phase: 1 | 2; steps: (n: number) => Step[]; worktree?: boolean; profile?: 'no_removals' | 'asks_npm' }> = [
  { role: 'turns', count: 5, phase: 1, steps: (n) => [1, 2, 3].map((k) => turn(`Part ${n}: step ${k} done; tests pass.`)) },
  { role: 'asker', count: 1, phase: 1, steps: (n) => [{ signal: { type: 'ask_human', question: `Part ${n}: should the cache be per user or global?` } }, turn(`Part ${n}: done as answered.`)] },
  // Its profile asks before npm: a sandboxed worker's Bash would otherwise run unasked (sandbox.auto_allow_bash).
  { role: 'permission', count: 1, phase: 1, profile: 'asks_npm', steps: (n) => [{ signal: { type: 'permission_request', tool: 'Bash', input: { command: `npm test -- part${n}` } } }, turn(`Part ${n}: tests ran.`)] },
  // Its profile denies rm: the request is refused at once, never reaching the brain; then its turn ends.
  { role: 'turns', count: 1, phase: 1, profile: 'no_removals', steps: () => [{ signal: { type: 'permission_request', tool: 'Bash', input: { command: 'rm -rf build' } } }, turn('Could not clean the build; left it.')] },
  { role: 'loop', count: 1, phase: 1, steps: () => [1, 2, 3, 4].map(() => turn('Retrying the flaky test.')) },
  { role: 'merge', count: 1, phase: 1, worktree: true, steps: (n) => [{ commit: `feature-${n}.txt` }, { signal: { type: 'report_progress', status: 'completed', message: `Feature ${n} is committed on my branch.` } }] },
  { role: 'turns', count: 4, phase: 2, steps: (n) => [1, 2, 3].map((k) => turn(`Part ${n}: step ${k} done; tests pass.`)) },
  { role: 'asker', count: 1, phase: 2, steps: (n) => [{ signal: { type: 'ask_human', question: `Part ${n}: may the API answer 202 here?` } }, turn(`Part ${n}: done as answered.`)] },
  { role: 'permission', count: 1, phase: 2, profile: 'asks_npm', steps: (n) => [{ signal: { type: 'permission_request', tool: 'Bash', input: { command: `npm run lint -- part${n}` } } }, turn(`Part ${n}: lint is clean.`)] },
  { role: 'merge', count: 1, phase: 2, worktree: true, steps: (n) => [{ commit: `feature-${n}.txt` }, { signal: { type: 'report_progress', status: 'completed', message: `Feature ${n} is committed on my branch.` } }] },
  { role: 'quiet', count: 1, phase: 2, steps: () => [] },
];
const CLAUDE_WORKERS = 2;

interface RunResult {
  label: string;
  report: ScenarioReport;
  settled: boolean;
  elapsed_ms: number;
}

/** Everything one run needs: the fake API playing the brain (and the claude workers), and the service of `root` on it. */
async function openRun(root: string, claude: string, extraEnv: Record<string, string> = {}) {
  const dirs = { bin: tempDir('bench-scenario-bin-'), home: tempDir('bench-scenario-home-'), data: tempDir('bench-scenario-data-'), work: tempDir('bench-scenario-work-') };
  const repo = gitRepo({ 'README.md': 'scenario\n' }, 'bench-scenario-repo-');
  symlinkSync(claude, join(dirs.bin.path, 'claude'));
  const roles = new Map<string, WorkerRole>();
  const brain = new ScenarioBrain((s) => roles.get(s));
  const brainCache = new PromptCache();
  const brainRequests: BrainRequest[] = [];
  const replies = new Map<number, ModelReply>();
  const isBrain = (r: MessagesRequest) => (r.tools ?? []).some((t) => t.name === 'mcp__brainstem__complete_round');
  /** When the limited worker's limit resets: set by its first request, which it refuses. */
  let limitResetAt = 0;
  const limited = (r: MessagesRequest): ModelReply | null => {
    if (!JSON.stringify(r.messages).includes(LIMITED_MARK)) return null;
    if (limitResetAt === 0) limitResetAt = Math.ceil((Date.now() + LIMIT_RESET_MS) / 1000) * 1000;
    return Date.now() < limitResetAt ? { usage_limited: { resets_at: limitResetAt / 1000, claim: 'five_hour' } } : null;
  };
  const api = new FakeAnthropicApi((n, request) => {
    const reply = isBrain(request) ? brain.reply(request) : (limited(request) ?? { text: 'Done with this step.' });
    replies.set(n, reply);
    return reply;
  });
  api.usage = (n, request) => {
    if (!isBrain(request)) return WORKER_USAGE;
    const at = Date.now();
    const usage: CacheUsage = brainCache.account(request, at);
    const reply = replies.get(n)!;
    const output_tokens = estimateTokens(JSON.stringify(reply));
    const last = lastUser(request);
    brainRequests.push({
      at,
      model: request.model,
      round: brain.round,
      usage,
      output_tokens,
      tool: 'tool' in reply ? reply.tool.replace('mcp__brainstem__', '') : null,
      session: 'tool' in reply && typeof reply.input.session === 'string' ? reply.input.session : null,
      round_prompt: !last.toolResult && /\brd_[a-z0-9]+/.test(last.text),
    });
    // BENCH_SCENARIO_DUMP=<file>: each brain request's last two messages and counts, to see what its fresh tokens are;
    // and digests of its tools, system and earlier messages, to see what a cache miss changed.
    if (process.env.BENCH_SCENARIO_DUMP) {
      const digest = (v: unknown) => createHash('sha256').update(JSON.stringify(v ?? null)).digest('hex').slice(0, 8);
      const prefix = { tools: digest(request.tools), system: digest(request.system), messages: request.messages.length, earlier: digest(request.messages.slice(0, -2)) };
      appendFileSync(process.env.BENCH_SCENARIO_DUMP, `${JSON.stringify({ round: brain.round, usage, prefix, tail: request.messages.slice(-2) })}\n`);
    }
    return { ...usage, output_tokens };
  };
  api.releaseAll();
  const env: Record<string, string> = {
    PATH: `${dirs.bin.path}${delimiter}${process.env.PATH ?? ''}`,
    HOME: dirs.home.path,
    ANTHROPIC_BASE_URL: await api.start(),
    ANTHROPIC_API_KEY: 'sk-ant-fake',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    MCP_TIMEOUT: '60000',
    BRAINSTEM_PORT: '0',
    BRAINSTEM_API_TOKEN: TEST_USER_TOKEN,
    BRAINSTEM_JOURNAL_DIR: join(dirs.data.path, 'journal'),
    BRAINSTEM_MAIN_BRAIN_DRIVER: 'agent',
    BRAINSTEM_MAIN_BRAIN_RUNTIME: 'claude-code',
    BRAINSTEM_MAIN_BRAIN_ROUND_TIMEOUT_S: '120',
    BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '300',
    BRAINSTEM_SUPERVISION_STALL_WATCHDOG_INTERVAL_S: '0',
    ...extraEnv,
  };
  const svc = new Service(root, env);
  const commandWorker = async (role: WorkerRole, opts: { worktree?: boolean; profile_id?: string } = {}) => {
    const body: Json = { runtime: 'command', command: process.execPath, args: [join(WORKERS, 'quiet.js')], cwd: opts.worktree ? repo.path : dirs.work.path };
    if (opts.worktree) body.isolation = 'worktree';
    if (opts.profile_id) body.profile_id = opts.profile_id;
    const s = await svc.ok<{ id: string }>('POST', '/coding-sessions', body);
    roles.set(s.id, role);
    return s.id;
  };
  /** The journal and the rounds as the service gives them at the end. */
  const collect = async (): Promise<{ journal: JournalRecord[]; rounds: RoundRecord[] }> => {
    const journal: JournalRecord[] = [];
    for (let after = 0; ; ) {
      const page = await svc.ok<{ events: JournalRecord[]; next_after_seq: number | null }>('GET', `/journal/events?after_seq=${after}&limit=1000`);
      journal.push(...page.events);
      if (page.next_after_seq === null) break;
      after = page.next_after_seq;
    }
    const rounds: RoundRecord[] = [];
    for (let cursor: string | null = null; ; ) {
      const page: { rounds: RoundRecord[]; next_cursor: string | null } = await svc.ok('GET', `/session-os/main-brain/rounds?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      rounds.push(...page.rounds);
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    return { journal, rounds };
  };
  const close = async () => {
    await svc.stop().catch(() => undefined);
    await api.close();
    await stopProcessesOfHome(dirs.home.path).catch(() => undefined);
    repo.remove();
    for (const d of Object.values(dirs)) d.remove();
  };
  return { svc, brain, roles, brainRequests, dirs, commandWorker, collect, close, repo };
}

/** One run of the script against the service of `root`. */
async function runScenario(label: string, root: string, claude: string): Promise<RunResult> {
  const { svc, brain, roles, brainRequests, dirs, repo, commandWorker, collect, close } = await openRun(root, claude);
  const started = Date.now();
  let settled = false;
  let restartAt = 0;
  const person = { seen: new Map<string, number>(), confirmed: 0 };
  try {
    await svc.start();
    const profiles = {
      no_removals: (await svc.ok<{ id: string }>('POST', '/agent-profiles', { name: 'No Removals', permissions: { deny: ['Bash(rm:*)'] } })).id,
      asks_npm: (await svc.ok<{ id: string }>('POST', '/agent-profiles', { name: 'Asks Before npm', permissions: { ask: ['Bash(npm:*)'] } })).id,
    };
    const workers: Worker[] = [];
    const startPhase = async (phase: 1 | 2) => {
      const from = Date.now();
      for (const part of SCRIPT.filter((p) => p.phase === phase)) {
        for (let n = 1; n <= part.count; n++) {
          const id = await commandWorker(part.role, { worktree: part.worktree, profile_id: part.profile ? profiles[part.profile] : undefined });
          workers.push({ role: part.role, id, steps: part.steps(workers.length + 1), waiting: false, ready_at: from + (workers.length % 10) * 400 });
        }
      }
    };
    await startPhase(1);
    for (let n = 1; n <= CLAUDE_WORKERS; n++) {
      const s = await svc.ok<{ id: string }>('POST', '/coding-sessions', { runtime: 'claude-code', cwd: dirs.work.path, prompt: `Write part ${n} of the report.` });
      roles.set(s.id, 'claude');
      if (n === 1) await svc.ok('PATCH', `/coding-sessions/${s.id}/budget`, { tokens: BUDGET_TOKENS });
    }
    // On a subscription (no API key): claude takes its usage limit as one, with its reset, and does not retry.
    const limitedWorker = await svc.ok<{ id: string }>('POST', '/coding-sessions', {
      runtime: 'claude-code',
      cwd: dirs.work.path,
      prompt: `Write ${LIMITED_MARK} of the report.`,
      env: { ANTHROPIC_API_KEY: '', CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-fake' },
    });
    roles.set(limitedWorker.id, 'claude');
    await svc.ok('POST', '/session-os/main-brain/autonomous', { enabled: true, task_hint: 'Finish the twenty parts of the scenario and merge the two features.', max_turns: 500 });
    const totalSteps = SCRIPT.reduce((a, p) => a + p.count * p.steps(0).length, 0);
    let posted = 0;
    let lastActivity = Date.now();
    let lastLog = Date.now();
    while (Date.now() - started < RUN_DEADLINE_MS) {
      if (restartAt === 0 && workers.every((w) => w.steps.length === 0 && !w.waiting)) {
        // The restart in the middle: the journal outlives the service; the workers (and a round in flight) outlive it too.
        restartAt = Date.now();
        console.error(`  [${label}] ${((restartAt - started) / 1000).toFixed(0)} s: restarting the service`);
        await svc.stop();
        await svc.start();
        await startPhase(2);
      }
      const now = Date.now();
      const sessions = (await svc.ok<{ sessions: Array<{ id: string; state: string; work_tree: string | null }> }>('GET', '/coding-sessions?limit=100')).sessions;
      const byId = new Map(sessions.map((s) => [s.id, s]));
      for (const w of workers) {
        const s = byId.get(w.id);
        if (!s) continue;
        if (w.waiting && s.state === 'working') {
          w.waiting = false;
          w.ready_at = now + STEP_GAP_MS;
        }
        if (w.waiting || w.steps.length === 0 || now < w.ready_at || s.state !== 'working') continue;
        const step = w.steps.shift()!;
        posted++;
        lastActivity = now;
        if ('commit' in step) {
          repo.write(step.commit, `${step.commit}\n`, s.work_tree!);
          repo.commitAll(`add ${step.commit}`, s.work_tree!);
          w.ready_at = now;
          continue;
        }
        const res = await svc.call<{ state?: string; code?: string }>('POST', `/coding-sessions/${w.id}/signals`, step.signal);
        // A request the session's profile denies is refused at once (403 denied_by_profile): the worker goes on.
        const denied = res.status === 403 && res.body.code === 'denied_by_profile';
        if (res.status >= 400 && !denied) throw new Error(`signal ${JSON.stringify(step.signal)} for ${w.id}: ${res.status} ${JSON.stringify(res.body)}`);
        w.waiting = !denied && res.body.state !== 'working';
        w.ready_at = now + STEP_GAP_MS;
      }
      // The person: whatever asks them is answered after a delay.
      const pending = (await svc.ok<{ confirmations: Array<{ id: string }> }>('GET', '/session-os/main-brain/confirmations?status=pending')).confirmations;
      for (const c of pending) {
        const seen = person.seen.get(c.id) ?? now;
        person.seen.set(c.id, seen);
        if (now - seen >= PERSON_DELAY_MS && (await svc.call('POST', `/session-os/main-brain/confirmations/${c.id}/confirm`)).status < 300) person.confirmed++;
      }
      const rounds = (await svc.ok<{ rounds: Array<{ status: string; started_at: string }> }>('GET', '/session-os/main-brain/rounds?limit=1')).rounds;
      const latest = rounds[0];
      if (latest && (latest.status === 'in_flight' || Date.parse(latest.started_at) > lastActivity)) lastActivity = Math.max(lastActivity, latest.status === 'in_flight' ? now : Date.parse(latest.started_at));
      if (pending.length) lastActivity = now;
      if (now - lastLog >= 10_000) {
        lastLog = now;
        const waiting = workers.filter((w) => w.waiting).length;
        console.error(`  [${label}] ${((now - started) / 1000).toFixed(0)} s: ${posted}/${totalSteps} steps, ${waiting} waiting, ${brain.calls.size} rounds seen by the brain, ${pending.length} confirmations pending`);
      }
      if (posted === totalSteps && restartAt > 0 && now - lastActivity >= SETTLED_MS) {
        settled = true;
        break;
      }
      await sleep(150);
    }
    const { journal, rounds } = await collect();
    for (const w of workers) if (w.waiting || w.steps.length) console.error(`  [${label}] unfinished: ${w.role} ${w.id} ${w.waiting ? 'waiting' : ''} ${w.steps.length} steps left`);
    for (const e of brain.errors) console.error(`  [${label}] a brain call failed: ${e}`);
    const report = scenarioReport({ journal, rounds, brainRequests, brainCalls: brain.calls, prices: dollarsOf });
    return { label, report, settled, elapsed_ms: Date.now() - started };
  } finally {
    await close();
  }
}

/** Between the long run's worker going on and its next turn's end. */
const LONG_STEP_GAP_MS = 100;

/**
 * Part 3: `rounds` rounds of one worker's turns on a small context budget, so the brain's conversation rolls over again
 * and again; a question nobody answers and a merge the person never confirms stay open throughout. Prints tokens per
 * round in ten stretches of the run, the roll-overs, and what their kept summaries carry.
 */
async function runLong(root: string, claude: string, rounds: number, budget: number): Promise<void> {
  const { svc, brain, brainRequests, repo, commandWorker, collect, close } = await openRun(root, claude, { BRAINSTEM_MAIN_BRAIN_CONTEXT_BUDGET_TOKENS: String(budget) });
  const started = Date.now();
  const goal = 'Take the long task to its end, one step at a time.';
  const question = 'Should the archive be kept per user or globally?';
  try {
    await svc.start();
    const worker = await commandWorker('turns');
    const asker = await commandWorker('quiet');
    const merger = await commandWorker('merge', { worktree: true });
    const tree = (await svc.ok<{ work_tree: string }>('GET', `/coding-sessions/${merger}`)).work_tree;
    repo.write('archive.txt', 'archive\n', tree);
    repo.commitAll('add the archive', tree);
    await svc.ok('POST', '/session-os/main-brain/autonomous', { enabled: true, task_hint: goal, max_turns: Math.min(1000, rounds + 50) });
    await svc.ok('POST', `/coding-sessions/${asker}/signals`, { type: 'ask_human', question });
    await svc.ok('POST', `/coding-sessions/${merger}/signals`, { type: 'report_progress', status: 'completed', message: 'The archive feature is committed on my branch.' });
    let step = 0;
    let waiting = false;
    let readyAt = Date.now() + 1000;
    let lastLog = Date.now();
    while (brain.calls.size < rounds && Date.now() - started < RUN_DEADLINE_MS) {
      const now = Date.now();
      const state = (await svc.ok<{ state: string }>('GET', `/coding-sessions/${worker}`)).state;
      if (waiting && state === 'working') {
        waiting = false;
        readyAt = now + LONG_STEP_GAP_MS;
      }
      if (!waiting && state === 'working' && now >= readyAt) {
        step++;
        waiting = (await svc.ok<{ state: string }>('POST', `/coding-sessions/${worker}/signals`, { type: 'turn_ended', result: `Step ${step} of the long task is done.` })).state !== 'working';
      }
      if (now - lastLog >= 15_000) {
        lastLog = now;
        console.error(`  [long] ${((now - started) / 1000).toFixed(0)} s: ${brain.calls.size} rounds`);
      }
      await sleep(50);
    }
    const pending = (await svc.ok<{ confirmations: Array<{ id: string }> }>('GET', '/session-os/main-brain/confirmations?status=pending')).confirmations;
    const { journal } = await collect();
    const r = longRunReport(journal, brainRequests, { goal, question, confirmation_id: pending[0]?.id ?? null });
    console.log(`\nlong run: ${r.rounds} rounds in ${((Date.now() - started) / 1000).toFixed(0)} s, context budget ${budget} tokens, ${r.rollovers} roll-overs (context_budget)`);
    console.log(`${'rounds'.padEnd(14)}${'fresh/round p50'.padStart(18)}${'p99'.padStart(10)}${'cache-read/round p50'.padStart(24)}${'p99'.padStart(10)}`);
    for (const w of r.windows) console.log(`${`${w.from}-${w.to}`.padEnd(14)}${String(w.fresh.p50).padStart(18)}${String(w.fresh.p99).padStart(10)}${String(w.cache_read.p50).padStart(24)}${String(w.cache_read.p99).padStart(10)}`);
    const of = (x: number) => `${x} of ${r.rollovers}`;
    console.log(`kept summaries carrying: the goal ${of(r.carries.goal)}; the open question ${of(r.carries.question)}; the pending confirmation ${pending[0] ? of(r.carries.confirmation) : '(none was pending)'}`);
    if (r.first_summary) console.log(`the first kept summary:\n${r.first_summary.split('\n').map((l) => `  | ${l}`).join('\n')}`);
  } finally {
    await close();
  }
}

async function main(): Promise<void> {
  const claude = findClaude();
  if (!claude) {
    console.error('bench:scenario needs a real claude: set BRAINSTEM_REAL_CLAUDE (eval "$(bash .ci/real-clis)") or put `claude` on PATH.');
    process.exit(2);
  }
  const baseline = arg('--baseline');
  if (baseline && !existsSync(join(baseline, 'src/supervision/round-prompt.ts'))) throw new Error(`--baseline: ${baseline} is not a Brainstem checkout`);
  const head = (root: string) => execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  console.log(`scenario bench: ${execFileSync(claude, ['--version'], { encoding: 'utf8' }).trim()}; this checkout ${head(HERE)}${baseline ? `, baseline ${baseline} at ${head(baseline)}` : ''}`);
  const long = arg('--rounds');
  if (long !== undefined) {
    const rounds = Number(long);
    const budget = Number(arg('--context-budget') ?? 60_000);
    if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: a whole number ≥ 1, got ${long}`);
    if (!Number.isInteger(budget) || budget < 1000) throw new Error(`--context-budget: a whole number ≥ 1000, got ${arg('--context-budget')}`);
    await runLong(HERE, claude, rounds, budget);
    return;
  }
  const results: RunResult[] = [];
  results.push(await runScenario(`this checkout (${head(HERE)})`, HERE, claude));
  if (baseline) results.push(await runScenario(`baseline (${head(baseline)})`, resolve(baseline), claude));
  printTable(results);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
