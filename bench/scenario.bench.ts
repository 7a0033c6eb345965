// npm run bench:scenario [-- --baseline <checkout>] [--rounds N] — one scripted supervision, the same every run, driven
// through a real service and a real claude as the hosted brain, against a fake Anthropic API that plays the brain (it
// calls Brainstem's MCP tools on what each round prompt names) and counts tokens under Anthropic's prompt caching.
// 20 workers: command workers whose turns, questions and permission requests the bench signals, two in worktrees whose
// changes the brain merges, one looping, one with a permission its profile denies, plus two real claude workers on the
// same fake API (one past 80% of its budget). A simulated person confirms what reaches them after a delay. The service
// restarts once in the middle. With --baseline, the same script runs from that checkout too (its own service and round
// prompt), and the table shows both, the bytes of the facts themselves as a lower bound, and the ratios.
// --rounds N (part 3): instead, a long run of N rounds of one worker's turns on a small context budget, to show tokens
// per round stay flat across roll-overs and the kept summary carries the goal.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
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
const SCRIPT: Array<{ role: WorkerRole; count: number; phase: 1 | 2; steps: (n: number) => Step[]; worktree?: boolean; deniesRm?: boolean }> = [
  { role: 'turns', count: 5, phase: 1, steps: (n) => [1, 2, 3].map((k) => turn(`Part ${n}: step ${k} done; tests pass.`)) },
  { role: 'asker', count: 1, phase: 1, steps: (n) => [{ signal: { type: 'ask_human', question: `Part ${n}: should the cache be per user or global?` } }, turn(`Part ${n}: done as answered.`)] },
  { role: 'permission', count: 1, phase: 1, steps: (n) => [{ signal: { type: 'permission_request', tool: 'Bash', input: { command: `npm test -- part${n}` } } }, turn(`Part ${n}: tests ran.`)] },
  // Its profile denies rm: the request is refused at once, never reaching the brain; then its turn ends.
  { role: 'turns', count: 1, phase: 1, deniesRm: true, steps: () => [{ signal: { type: 'permission_request', tool: 'Bash', input: { command: 'rm -rf build' } } }, turn('Could not clean the build; left it.')] },
  { role: 'loop', count: 1, phase: 1, steps: () => [1, 2, 3, 4].map(() => turn('Retrying the flaky test.')) },
  { role: 'merge', count: 1, phase: 1, worktree: true, steps: (n) => [{ commit: `feature-${n}.txt` }, { signal: { type: 'report_progress', status: 'completed', message: `Feature ${n} is committed on my branch.` } }] },
  { role: 'turns', count: 4, phase: 2, steps: (n) => [1, 2, 3].map((k) => turn(`Part ${n}: step ${k} done; tests pass.`)) },
  { role: 'asker', count: 1, phase: 2, steps: (n) => [{ signal: { type: 'ask_human', question: `Part ${n}: may the API answer 202 here?` } }, turn(`Part ${n}: done as answered.`)] },
  { role: 'permission', count: 1, phase: 2, steps: (n) => [{ signal: { type: 'permission_request', tool: 'Bash', input: { command: `npm run lint -- part${n}` } } }, turn(`Part ${n}: lint is clean.`)] },
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

/** One run of the script against the service of `root`. */
async function runScenario(label: string, root: string, claude: string): Promise<RunResult> {
  const dirs = { bin: tempDir('bench-scenario-bin-'), home: tempDir('bench-scenario-home-'), data: tempDir('bench-scenario-data-'), work: tempDir('bench-scenario-work-') };
  const repo = gitRepo({ 'README.md': 'scenario\n' }, 'bench-scenario-repo-');
  symlinkSync(claude, join(dirs.bin.path, 'claude'));
  const roles = new Map<string, WorkerRole>();
  const brain = new ScenarioBrain((s) => roles.get(s));
  const brainCache = new PromptCache();
  const brainRequests: BrainRequest[] = [];
  const replies = new Map<number, ModelReply>();
  const isBrain = (r: MessagesRequest) => (r.tools ?? []).some((t) => t.name === 'mcp__brainstem__complete_round');
  const api = new FakeAnthropicApi((n, request) => {
    const reply = isBrain(request) ? brain.reply(request) : { text: 'Done with this step.' };
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
    brainRequests.push({ at, model: request.model, round: brain.round, usage, output_tokens, tool: 'tool' in reply ? reply.tool.replace('mcp__brainstem__', '') : null, session: 'tool' in reply && typeof reply.input.session === 'string' ? reply.input.session : null, round_prompt: !last.toolResult && /\brd_[a-z0-9]+/.test(last.text) });
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
  };
  const svc = new Service(root, env);
  const started = Date.now();
  let settled = false;
  let restartAt = 0;
  const person = { seen: new Map<string, number>(), confirmed: 0 };
  try {
    await svc.start();
    const profile = await svc.ok<{ id: string }>('POST', '/agent-profiles', { name: 'No Removals', permissions: { deny: ['Bash(rm:*)'] } });
    const workers: Worker[] = [];
    const startPhase = async (phase: 1 | 2) => {
      const from = Date.now();
      for (const part of SCRIPT.filter((p) => p.phase === phase)) {
        for (let n = 1; n <= part.count; n++) {
          const body: Json = { runtime: 'command', command: process.execPath, args: [join(WORKERS, 'quiet.js')], cwd: part.worktree ? repo.path : dirs.work.path };
          if (part.worktree) body.isolation = 'worktree';
          if (part.deniesRm) body.profile_id = profile.id;
          const s = await svc.ok<{ id: string }>('POST', '/coding-sessions', body);
          roles.set(s.id, part.role);
          workers.push({ role: part.role, id: s.id, steps: part.steps(workers.length + 1), waiting: false, ready_at: from + (workers.length % 10) * 400 });
        }
      }
    };
    await startPhase(1);
    for (let n = 1; n <= CLAUDE_WORKERS; n++) {
      const s = await svc.ok<{ id: string }>('POST', '/coding-sessions', { runtime: 'claude-code', cwd: dirs.work.path, prompt: `Write part ${n} of the report.` });
      roles.set(s.id, 'claude');
      if (n === 1) await svc.ok('PATCH', `/coding-sessions/${s.id}/budget`, { tokens: BUDGET_TOKENS });
    }
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
    for (const w of workers) if (w.waiting || w.steps.length) console.error(`  [${label}] unfinished: ${w.role} ${w.id} ${w.waiting ? 'waiting' : ''} ${w.steps.length} steps left`);
    for (const e of brain.errors) console.error(`  [${label}] a brain call failed: ${e}`);
    const report = scenarioReport({ journal, rounds, brainRequests, brainCalls: brain.calls, prices: dollarsOf });
    return { label, report, settled, elapsed_ms: Date.now() - started };
  } finally {
    await svc.stop().catch(() => undefined);
    await api.close();
    await stopProcessesOfHome(dirs.home.path).catch(() => undefined);
    repo.remove();
    for (const d of Object.values(dirs)) d.remove();
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
  const results: RunResult[] = [];
  results.push(await runScenario(`this checkout (${head(HERE)})`, HERE, claude));
  if (baseline) results.push(await runScenario(`baseline (${head(baseline)})`, resolve(baseline), claude));
  printTable(results);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
