import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statfsSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import { openLevelJournal, openPgJournal } from '../../src/journal/journal.factory';
import { JournalEvent, VerifyReport } from '../../src/journal/journal.port';
import { PgCluster, PgDatabase, startPgCluster } from '../support/pg-cluster';
import { SeededRandom } from '../support/seeded-random';
import { ServiceProcess, spawnService } from '../support/service-process';
import { TEST_USER_TOKEN } from '../support/test-config';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { WORKERS, WorkerReaper } from '../support/workers';
import { GitRepo, gitRepo } from '../support/git-repo';
import { Bounds, FullDiskAnswer, LeaderChange, MergeProbe, Outage, Refusal, Violation, Write, answerTo, checkInvariants } from './fault-invariants';

/**
 * The fault campaign (bench/README.md, The fault campaign): real service processes supervising about ten `command`
 * workers, on PostgreSQL (three nodes) or on LevelDB alone (one node, its journal on a small tmpfs); the campaign is
 * the traffic (signals from the workers' sessions), the brain (it answers each question a round names, then completes
 * the round) and the faults, drawn from a seed it prints. After each fault it reads the journal back and checks the
 * invariants of fault-invariants.ts. It stops by itself: a bounded count of faults, each bounded in time.
 */

export type CampaignMode = 'pg' | 'level';

export interface CampaignOptions {
  mode: CampaignMode;
  seed: number;
  faults: number;
  workers?: number;
  log?: (line: string) => void;
  /** Only these kinds of fault (their names, as printed); all of the mode's when absent. */
  only?: readonly string[];
  /** Where each node process's output is written as it is replaced and at the end (the evidence of a violation). */
  logDir?: string;
}

export interface CampaignResult {
  mode: CampaignMode;
  seed: number;
  faultsInjected: number;
  faultsByKind: Record<string, number>;
  invariantsChecked: number;
  violations: Violation[];
  acknowledged: number;
  refused: number;
  unanswered: number;
  rounds: number;
  events: number;
  durationMs: number;
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const LEASE_TTL_S = 2;
const DEBOUNCE_MS = 200;
/** Far past the wait bound: a round left in flight by a lost leader shows as a wait, not as a quick timeout. */
const ROUND_TIMEOUT_S = 20;
const BOUNDS: Bounds = { debounceMs: DEBOUNCE_MS, leaseTtlMs: LEASE_TTL_S * 1000, slackMs: 2000 };
/** The most a supervision allows; the brain enables it again (its turns start over) well before the rounds reach it. */
const MAX_TURNS = 1000;
const TMPFS_SIZE = '128m';
/** Every wait on the service is bounded: the campaign stops by itself. */
const RECOVERY_MS = 90_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  status: number;
  body: Json | null;
  /** Set when no answer came (refused connection, timeout): the write's outcome is unknown. */
  error?: string;
}

async function http(url: string, token: string, method: string, path: string, body?: object, timeoutMs = 3000): Promise<Answer> {
  try {
    const res = await fetch(`${url}/api/v1${path}`, {
      method,
      headers: body ? { authorization: `Bearer ${token}`, 'content-type': 'application/json' } : { authorization: `Bearer ${token}` },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let json: Json | null = null;
    try {
      json = JSON.parse(text) as Json;
    } catch {
      json = { raw: text };
    }
    return { status: res.status, body: json };
  } catch (e) {
    return { status: 0, body: null, error: (e as Error).message };
  }
}

interface Node {
  id: string;
  env: Record<string, string>;
  svc: ServiceProcess | null;
  /** SIGSTOPped by the campaign, not yet continued. */
  stopped: boolean;
}

/** What the campaign did and saw, and what it knows the service acknowledged. */
class Ledger {
  readonly acknowledged: Write[] = [];
  readonly refused: Refusal[] = [];
  unanswered = 0;
  notTaken = 0;
  readonly leaderChanges: LeaderChange[] = [];
  readonly outages: Outage[] = [];
  readonly seen = new Map<number, string>();
  readonly violations = new Map<string, Violation>();
  invariantsChecked = 0;
  faults = 0;
  readonly faultsByKind: Record<string, number> = {};
  readonly refusedCodes = new Map<string, number>();
  readonly fullDiskAnswers: FullDiskAnswer[] = [];
  readonly merges: Array<{ session_id: string; acknowledged: boolean; commit: string }> = [];
}

/** The service could not go on (a node that will not start again): the campaign stops there, with this as a violation. */
class CampaignHalted extends Error {
  constructor(readonly violation: Violation) {
    super(violation.detail);
  }
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const t0 = Date.now();
  // The faults' kinds, delays and durations come from the seed alone, drawn a fixed number of times per fault; picks
  // whose count depends on timing (the signals during a full disk) come from the traffic's.
  const faultRandom = new SeededRandom(options.seed);
  const trafficRandom = new SeededRandom(options.seed ^ 0x5bd1e995);
  const brainRandom = new SeededRandom(options.seed ^ 0x1b873593);
  const workerCount = options.workers ?? 10;
  const ledger = new Ledger();
  const dir = tempDir('brainstem-faults-');
  const reaper = new WorkerReaper();
  let cluster: PgCluster | null = null;
  let db: PgDatabase | null = null;
  let leases: Pool | null = null;
  let tmpfs: string | null = null;
  const repo: GitRepo = gitRepo({ 'README.md': 'the fault campaign\n' }, 'brainstem-faults-repo-');
  const nodes: Node[] = [];
  let running = true;
  let halted = false;
  const loops: Array<Promise<void>> = [];

  log(`fault campaign: mode ${options.mode}, seed ${options.seed}, ${options.faults} faults, ${workerCount} workers, lease TTL ${LEASE_TTL_S} s, debounce ${DEBOUNCE_MS} ms`);

  let incarnations = 0;
  const keepOutput = (n: Node, svc: ServiceProcess | null, output?: string) => {
    if (!options.logDir || (!svc && output === undefined)) return;
    mkdirSync(options.logDir, { recursive: true });
    writeFileSync(join(options.logDir, `${n.id}-${++incarnations}.log`), output ?? svc!.output());
  };
  /** A node started as startService starts one, except that one that does not come up is killed, its output kept. */
  const boot = async (n: Node) => {
    const p = spawnService(n.env);
    try {
      const url = await waitFor(
        () => {
          if (p.child.exitCode !== null) throw new Error(`it exited ${p.child.exitCode}`);
          return /Brainstem listening on (http:\/\/\S+)/.exec(p.output())?.[1];
        },
        { timeoutMs: RECOVERY_MS, intervalMs: 50, what: `node ${n.id} to listen` },
      );
      n.svc = { ...p, url, token: TEST_USER_TOKEN, auth: { authorization: `Bearer ${TEST_USER_TOKEN}` } };
    } catch (e) {
      p.child.kill('SIGKILL');
      await p.exited;
      keepOutput(n, null, p.output());
      const said = p.output().split('\n').filter((l) => !l.includes('"msg":"GET ') && !l.includes('"msg":"POST ')).slice(-8).join('\n');
      throw new CampaignHalted({ invariant: 'acknowledged_kept', key: `acknowledged_kept:restart:${n.id}`, detail: `node ${n.id} did not start again (${(e as Error).message}); its output ends:\n${said.slice(-1500)}` });
    }
    n.stopped = false;
  };
  const live = () => nodes.filter((n) => n.svc !== null && n.svc.child.exitCode === null && !n.stopped);
  const call = (n: Node, method: string, path: string, body?: object, timeoutMs?: number) =>
    n.svc ? http(n.svc.url, n.svc.token, method, path, body, timeoutMs) : Promise.resolve<Answer>({ status: 0, body: null, error: 'node down' });
  const must = async (n: Node, method: string, path: string, body?: object): Promise<Json> => {
    const a = await call(n, method, path, body, 10_000);
    if (a.status < 200 || a.status >= 300) throw new Error(`${method} ${path} on ${n.id}: ${a.status} ${a.error ?? JSON.stringify(a.body)}`);
    return a.body ?? {};
  };
  const kill = async (n: Node) => {
    const svc = n.svc;
    if (!svc) return;
    svc.child.kill('SIGCONT');
    svc.child.kill('SIGKILL');
    await svc.exited;
    keepOutput(n, svc);
    n.svc = null;
    n.stopped = false;
  };

  /** The supervisor lease as PostgreSQL has it; null while the database does not answer. */
  let lease: { holder: string; term: number } | null = null;
  const readLease = async (): Promise<{ holder: string; term: number; expires: number } | null> => {
    try {
      const rows = (await leases!.query("SELECT holder, term::int AS term, expires_at FROM brainstem_leases WHERE name = 'supervisor'")).rows as Array<{ holder: string; term: number; expires_at: Date }>;
      return rows[0] ? { holder: rows[0].holder, term: rows[0].term, expires: rows[0].expires_at.getTime() } : null;
    } catch {
      return null;
    }
  };
  /**
   * When a node took the lease in a term, as it logged it ("supervising as the lease holder (term N)"); null before it
   * logged it. The table alone can say it late: read after renewals (the poll held up by a database restart), its
   * expiry no longer tells when the term began, and a leader's own first rounds would look older than its term.
   */
  const tookLease = (id: string, term: number): number | null => {
    const out = nodes.find((n) => n.id === id)?.svc?.output() ?? '';
    const line = out.split('\n').reverse().find((l) => l.includes(`supervising as the lease holder (term ${term})`));
    const time = line ? /"time":"([^"]+)"/.exec(line)?.[1] : undefined;
    return time ? Date.parse(time) : null;
  };
  /** Notes each change of holder, from when the new holder took it: as it logged it, else its first expiry less the TTL. */
  const watchLease = async () => {
    while (running) {
      const l = await readLease();
      if (l) {
        if (lease && l.holder !== lease.holder) {
          const at = tookLease(l.holder, l.term) ?? Math.min(Date.now(), l.expires - LEASE_TTL_S * 1000);
          ledger.leaderChanges.push({ at, holder: l.holder });
          log(`  lease: ${lease.holder} (term ${lease.term}) -> ${l.holder} (term ${l.term}) at ${new Date(at).toISOString()}`);
        }
        lease = { holder: l.holder, term: l.term };
      }
      await sleep(150);
    }
  };
  const leader = (): Node | undefined => (options.mode === 'level' ? nodes[0] : nodes.find((n) => n.id === lease?.holder));
  const followers = (): Node[] => live().filter((n) => n !== leader());

  // ---- the workers' traffic: each signal names a unique question or result, and its answer is noted ------------------
  const sessions: string[] = [];
  /** The node that runs each session's worker: a message reaches a worker only there. */
  const runsOn = new Map<string, Node>();
  let written = 0;
  const signal = async (via: Node, session: string): Promise<void> => {
    const ask = trafficRandom.chance(0.6);
    const key = `${ask ? 'q' : 'r'}-${++written}`;
    const write: Write = { kind: 'signal', session_id: session, event_type: ask ? 'session.asked_human' : 'session.turn_ended', key };
    const a = await call(via, 'POST', `/coding-sessions/${session}/signals`, ask ? { type: 'ask_human', question: key } : { type: 'turn_ended', result: key });
    note(write, a);
  };
  const note = (write: Write, a: Answer) => {
    if (a.status >= 200 && a.status < 300) {
      // A signal the session's state does not take is answered with its state and journals nothing (a report after its exit).
      if (write.kind === 'signal' && a.body?.state !== (write.event_type === 'session.asked_human' ? 'pending_decision' : 'pending_handling')) ledger.notTaken++;
      else ledger.acknowledged.push(write);
    } else if (definiteRefusal(a)) {
      const code = typeof a.body?.code === 'string' ? (a.body.code as string) : typeof a.body?.error === 'string' ? (a.body.error as string) : null;
      ledger.refused.push({ write, status: a.status, code });
      const k = `${a.status} ${code}`;
      ledger.refusedCodes.set(k, (ledger.refusedCodes.get(k) ?? 0) + 1);
    } else ledger.unanswered++;
  };
  /**
   * A 4xx refuses a write before it is journaled. A 503 does too on LevelDB (the write failed there); on PostgreSQL a
   * connection lost during the commit leaves it unknown whether it committed, so only a 4xx counts there.
   */
  const definiteRefusal = (a: Answer) => (a.status >= 400 && a.status < 500) || (options.mode === 'level' && a.status === 503);
  const traffic = async () => {
    while (running) {
      await sleep(trafficRandom.between(80, 350));
      const via = live();
      if (via.length === 0 || sessions.length === 0) continue;
      await signal(trafficRandom.pick(via), trafficRandom.pick(sessions));
    }
  };

  // ---- the brain: attached to the leader; what one leader gave it, it finishes there or not at all ---------------------
  let roundsSeen = 0;
  type Attachment = { node: Node; pid: number; since: number };
  const brain = async () => {
    let attached: Attachment | null = null;
    const taken = new Set<string>();
    while (running) {
      await sleep(100);
      const target = leader();
      const pid = target?.svc?.child.pid;
      if (!target || pid === undefined || target.svc?.child.exitCode !== null) continue;
      if (!attached || attached.node !== target || attached.pid !== pid) {
        // A new leader: the rounds an earlier one started are its to interrupt, not the brain's to finish.
        attached = { node: target, pid, since: ledger.leaderChanges.at(-1)?.at ?? 0 };
      }
      const here: Attachment = attached;
      const listed = await call(here.node, 'GET', '/session-os/main-brain/rounds', undefined, 1500);
      if (listed.status !== 200) continue;
      for (const r of (listed.body?.rounds ?? []) as Json[]) {
        if (r.status !== 'in_flight' || taken.has(r.id) || Date.parse(r.started_at) < here.since) continue;
        taken.add(r.id);
        if (++roundsSeen % 200 === 0) await call(here.node, 'POST', '/session-os/main-brain/autonomous', { enabled: true, max_turns: MAX_TURNS });
        await sleep(brainRandom.between(20, 200));
        for (const reason of r.reasons as Json[]) {
          if (reason.trigger !== 'ask_human' || typeof reason.message !== 'string') continue;
          const on = runsOn.get(reason.session_id);
          const via = on && live().includes(on) ? on : here.node;
          const a = await call(via, 'POST', `/coding-sessions/${reason.session_id}/messages`, { text: answerTo(reason.message) });
          note({ kind: 'answer', session_id: reason.session_id, key: reason.message }, a);
        }
        for (let tries = 0; tries < 20 && running; tries++) {
          // The lease moved on, or the node restarted: the round is the new leader's to interrupt.
          if (leader() !== here.node || here.node.svc?.child.pid !== here.pid) break;
          const done = await call(here.node, 'POST', `/session-os/main-brain/rounds/${r.id}/complete`, { summary: `seed ${options.seed}` });
          if (done.status === 200) ledger.acknowledged.push({ kind: 'completion', round_id: r.id });
          if (done.status !== 0 && done.status !== 503) break;
          await sleep(250);
        }
      }
    }
  };

  // ---- reading the journal back and checking ------------------------------------------------------------------------
  const readJournal = async (): Promise<{ verify: VerifyReport; events: JournalEvent[] }> => {
    if (options.mode === 'pg') {
      const j = await waitFor(() => openPgJournal(db!.url).catch(() => false as const), { timeoutMs: RECOVERY_MS, intervalMs: 500, what: 'the journal database to open' });
      try {
        const verify = await j.verify();
        const events: JournalEvent[] = [];
        for (;;) {
          const page = await j.readAll(events.length, 1000);
          if (page.length === 0) break;
          events.push(...page);
        }
        return { verify, events };
      } finally {
        await j.close();
      }
    }
    const n = nodes[0];
    const verify = (await must(n, 'GET', '/journal/verify')) as VerifyReport;
    const events: JournalEvent[] = [];
    for (;;) {
      const page = await must(n, 'GET', `/journal/events?after_seq=${events.length}&limit=1000`);
      events.push(...(page.events as JournalEvent[]));
      if (page.next_after_seq === null) break;
    }
    return { verify, events };
  };
  const check = async (label: string, read: () => Promise<{ verify: VerifyReport; events: JournalEvent[] }> = readJournal): Promise<number> => {
    // What was answered before the read began must be in what it reads; what is answered meanwhile, at the next check.
    const acknowledged = ledger.acknowledged.slice();
    const merges = ledger.merges.map((m): MergeProbe => ({
      session_id: m.session_id,
      acknowledged: m.acknowledged,
      in_git: spawnSync('git', ['merge-base', '--is-ancestor', m.commit, 'main'], { cwd: repo.path }).status === 0,
      half_done: repo.mergeHead(),
    }));
    const refused = ledger.refused.slice();
    const now = Date.now();
    const { verify, events } = await read();
    const { checked, violations } = checkInvariants(
      {
        verify,
        events,
        acknowledged,
        refused,
        seen: ledger.seen,
        leaderChanges: ledger.leaderChanges,
        outages: ledger.outages,
        fullDiskAnswers: ledger.fullDiskAnswers,
        merges,
        now,
      },
      BOUNDS,
    );
    ledger.invariantsChecked += checked.length;
    if (options.logDir) {
      mkdirSync(options.logDir, { recursive: true });
      writeFileSync(join(options.logDir, 'journal.ndjson'), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    }
    for (const e of events) if (!ledger.seen.has(e.seq)) ledger.seen.set(e.seq, e.hash);
    let fresh = 0;
    for (const v of violations) {
      if (ledger.violations.has(v.key)) continue;
      ledger.violations.set(v.key, v);
      fresh++;
      log(`  VIOLATION ${v.invariant}: ${v.detail}`);
    }
    log(`  checked ${checked.length} invariants after ${label}: ${events.length} events, chain ${verify.ok ? 'verifies' : 'BROKEN'}, ${fresh} new violation(s)`);
    return events.length;
  };

  /** Every node answers and one leads (PostgreSQL); the node answers (LevelDB). */
  const recovered = () =>
    waitFor(
      async () => {
        for (const n of nodes) if ((await call(n, 'GET', '/ready', undefined, 2000)).status !== 200) return false;
        if (options.mode === 'level') return true;
        const l = leader();
        return l !== undefined && (await call(l, 'GET', '/ready', undefined, 2000)).body?.lease?.role === 'leader';
      },
      { timeoutMs: RECOVERY_MS, intervalMs: 200, what: 'the nodes to recover' },
    );

  // ---- the faults ---------------------------------------------------------------------------------------------------
  type Fault = readonly [weight: number, name: string, run: () => Promise<string>];
  const restartLater = async (n: Node) => {
    await sleep(faultRandom.between(0, 1500));
    await boot(n);
  };
  const pgFaults: readonly Fault[] = [
    [3, 'pg:kill-leader', async () => {
      const n = leader()!;
      await kill(n);
      await restartLater(n);
      return `SIGKILL of the leader ${n.id}, restarted`;
    }],
    [2, 'pg:kill-follower', async () => {
      const n = faultRandom.pick(followers());
      await kill(n);
      await restartLater(n);
      return `SIGKILL of the follower ${n.id}, restarted`;
    }],
    [3, 'pg:kill-leader-at-round-start', async () => {
      // During a round's start: a trigger, then the kill as the debounce ends and the round is being started.
      const n = leader()!;
      const via = faultRandom.pick(followers());
      await signal(via, faultRandom.pick(sessions));
      const delay = DEBOUNCE_MS + faultRandom.between(-50, 150);
      await sleep(delay);
      await kill(n);
      await restartLater(n);
      return `SIGKILL of the leader ${n.id} ${delay} ms after a trigger (a round's start), restarted`;
    }],
    [2, 'pg:stop-leader', async () => {
      const n = leader()!;
      const held = LEASE_TTL_S * 1000 + faultRandom.between(300, 2500);
      n.svc!.child.kill('SIGSTOP');
      n.stopped = true;
      await sleep(held);
      n.svc!.child.kill('SIGCONT');
      n.stopped = false;
      return `SIGSTOP of the leader ${n.id} for ${held} ms, continued`;
    }],
    [2, 'pg:stop-leader-at-round-start', async () => {
      const n = leader()!;
      await signal(faultRandom.pick(followers()), faultRandom.pick(sessions));
      const delay = DEBOUNCE_MS + faultRandom.between(-50, 150);
      await sleep(delay);
      const held = LEASE_TTL_S * 1000 + faultRandom.between(300, 2500);
      n.svc!.child.kill('SIGSTOP');
      n.stopped = true;
      await sleep(held);
      n.svc!.child.kill('SIGCONT');
      n.stopped = false;
      return `SIGSTOP of the leader ${n.id} ${delay} ms after a trigger (a round's start) for ${held} ms, continued`;
    }],
    [2, 'pg:stop-follower', async () => {
      const n = faultRandom.pick(followers());
      const held = faultRandom.between(500, 4000);
      n.svc!.child.kill('SIGSTOP');
      n.stopped = true;
      await sleep(held);
      n.svc!.child.kill('SIGCONT');
      n.stopped = false;
      return `SIGSTOP of the follower ${n.id} for ${held} ms, continued`;
    }],
    [2, 'pg:kill-owner-during-merge', () => killDuringMerge()],
    [2, 'pg:postgres-restart', async () => {
      const from = Date.now();
      cluster!.crash();
      const down = faultRandom.between(200, 2000);
      await sleep(down);
      cluster!.start();
      ledger.outages.push({ from, to: Date.now(), what: 'postgres restart' });
      return `PostgreSQL restart (crash, ${down} ms down, crash recovery)`;
    }],
  ];
  const levelFaults: readonly Fault[] = [
    [3, 'level:kill', async () => {
      const n = nodes[0];
      const from = Date.now();
      await kill(n);
      await restartLater(n);
      const to = Date.now();
      ledger.outages.push({ from, to, what: 'the node killed' });
      ledger.leaderChanges.push({ at: to, holder: `${n.id} (restarted)` });
      return `SIGKILL of the node, restarted`;
    }],
    [3, 'level:kill-at-round-start', async () => {
      const n = nodes[0];
      await signal(n, faultRandom.pick(sessions));
      const delay = DEBOUNCE_MS + faultRandom.between(-50, 150);
      await sleep(delay);
      const from = Date.now();
      await kill(n);
      await restartLater(n);
      const to = Date.now();
      ledger.outages.push({ from, to, what: 'the node killed' });
      ledger.leaderChanges.push({ at: to, holder: `${n.id} (restarted)` });
      return `SIGKILL of the node ${delay} ms after a trigger (a round's start), restarted`;
    }],
    [2, 'level:stop', async () => {
      const n = nodes[0];
      const held = faultRandom.between(500, 3000);
      const from = Date.now();
      n.svc!.child.kill('SIGSTOP');
      n.stopped = true;
      await sleep(held);
      n.svc!.child.kill('SIGCONT');
      n.stopped = false;
      ledger.outages.push({ from, to: Date.now(), what: 'the node stopped' });
      return `SIGSTOP of the node for ${held} ms, continued`;
    }],
    [3, 'level:disk-full', () => diskFull()],
    [1, 'level:kill-during-merge', () => killDuringMerge()],
  ];

  /**
   * A worktree session commits its work; its merge is asked through any node, and the node that owns the session (it
   * runs git) is killed 0–80 ms later, then restarted: git and the journal must agree on whether it merged.
   */
  let merged = 0;
  const killDuringMerge = async (): Promise<string> => {
    const owner = faultRandom.pick(live());
    const via = faultRandom.pick(live());
    const k = ++merged;
    const s = await must(owner, 'POST', '/coding-sessions', {
      runtime: 'command',
      command: process.execPath,
      args: [join(WORKERS, 'git-editor.js'), JSON.stringify({ write: { [`merge-${k}.txt`]: `work ${k}\n` }, commit: `work ${k}` })],
      cwd: repo.path,
      isolation: 'worktree',
      title: `merge ${k}`,
    });
    reaper.track(s.pid as number);
    const branch = await waitFor(
      async () => {
        const d = await call(owner, 'GET', `/coding-sessions/${s.id}/diff`, undefined, 5000);
        return d.status === 200 && d.body?.ahead === 1 && ((await must(owner, 'GET', `/coding-sessions/${s.id}`)).worktree?.branch as string);
      },
      { timeoutMs: RECOVERY_MS, intervalMs: 100, what: `merge ${k}'s worker to commit` },
    );
    const commit = spawnSync('git', ['rev-parse', branch], { cwd: repo.path, encoding: 'utf8' }).stdout.trim();
    const from = Date.now();
    const asked = call(via, 'POST', `/coding-sessions/${s.id}/merge`, { strategy: 'merge' }, 5000);
    const delay = faultRandom.between(0, 80);
    await sleep(delay);
    await kill(owner);
    const answer = await asked;
    ledger.merges.push({ session_id: s.id as string, acknowledged: answer.status === 200, commit });
    await restartLater(owner);
    if (options.mode === 'level') {
      ledger.outages.push({ from, to: Date.now(), what: 'the node killed' });
      ledger.leaderChanges.push({ at: Date.now(), holder: `${owner.id} (restarted)` });
    }
    const said = answer.status === 0 ? `no answer (${answer.error})` : `${answer.status} ${answer.body?.code ?? answer.body?.worktree?.last_op?.ok ?? ''}`;
    return `SIGKILL of ${owner.id}${leader() === owner ? ' (the leader)' : ''}, the owner, ${delay} ms into a merge asked through ${via.id} (answered ${said}), restarted`;
  };

  /** Fills the journal's tmpfs: writes must be refused with a 503 and a clear code, and go through once space returns. */
  const diskFull = async (): Promise<string> => {
    const n = nodes[0];
    const filler = join(tmpfs!, 'filler');
    const from = Date.now();
    const fd = openSync(filler, 'w');
    const chunk = Buffer.alloc(1 << 20);
    try {
      for (;;) writeSync(fd, chunk, 0, Math.min(chunk.length, Math.max(4096, statfsSync(tmpfs!).bavail * statfsSync(tmpfs!).bsize)));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
    } finally {
      closeSync(fd);
    }
    const refusedBefore = ledger.refused.length;
    const statuses = new Map<string, number>();
    const held = faultRandom.between(1000, 3000);
    const until = Date.now() + held;
    while (Date.now() < until) {
      const session = trafficRandom.pick(sessions);
      const key = `q-${++written}`;
      const write: Write = { kind: 'signal', session_id: session, event_type: 'session.asked_human', key };
      const a = await call(n, 'POST', `/coding-sessions/${session}/signals`, { type: 'ask_human', question: key });
      note(write, a);
      ledger.fullDiskAnswers.push({ status: a.status, code: typeof a.body?.code === 'string' ? (a.body.code as string) : null });
      const k = a.status === 0 ? `no answer (${a.error})` : `${a.status} ${a.body?.code ?? a.body?.error ?? ''}`;
      statuses.set(k, (statuses.get(k) ?? 0) + 1);
      await sleep(100);
    }
    rmSync(filler, { force: true });
    // Space is back: the next write must go through, without a restart; if the node died, that is said, and it restarts.
    let restarted = false;
    const back = await waitFor(
      async () => {
        if (n.svc?.child.exitCode !== null) return 'died';
        const session = trafficRandom.pick(sessions);
        const key = `q-${++written}`;
        const a = await call(n, 'POST', `/coding-sessions/${session}/signals`, { type: 'ask_human', question: key });
        note({ kind: 'signal', session_id: session, event_type: 'session.asked_human', key }, a);
        return a.status >= 200 && a.status < 300 ? 'ok' : false;
      },
      { timeoutMs: 15_000, intervalMs: 250, what: 'a write to go through once space returned' },
    ).catch(() => 'stuck' as const);
    if (back !== 'ok') {
      log(`  disk full: after space returned the node ${back === 'died' ? `had exited (${n.svc?.child.exitCode}); its output ends: ${n.svc?.output().slice(-600)}` : 'still refused writes; restarting it'}`);
      await kill(n);
      await boot(n);
      restarted = true;
      ledger.leaderChanges.push({ at: Date.now(), holder: `${n.id} (restarted)` });
    }
    ledger.outages.push({ from, to: Date.now(), what: 'the disk full' });
    const answers = [...statuses].map(([k, c]) => `${c}x ${k}`).join(', ');
    return `disk full for ${held} ms: ${ledger.refused.length - refusedBefore} writes refused (${answers}); space back: ${restarted ? `NOT recovered (${back}), node restarted` : 'writes go through'}`;
  };

  try {
    if (options.mode === 'pg') {
      cluster = await startPgCluster({ durable: true });
      db = await cluster.createDatabase();
      leases = new Pool({ connectionString: db.url, max: 1, connectionTimeoutMillis: 1000 });
      leases.on('error', () => undefined);
      for (const id of ['a', 'b', 'c']) {
        nodes.push({
          id,
          stopped: false,
          svc: null,
          env: {
            BRAINSTEM_JOURNAL_URL: db.url,
            BRAINSTEM_JOURNAL_DIR: join(dir.path, id),
            BRAINSTEM_NODE_ID: id,
            BRAINSTEM_NODE_LEASE_TTL_S: String(LEASE_TTL_S),
            BRAINSTEM_SUPERVISION_DEBOUNCE_MS: String(DEBOUNCE_MS),
            BRAINSTEM_MAIN_BRAIN_ROUND_TIMEOUT_S: String(ROUND_TIMEOUT_S),
          },
        });
      }
      await boot(nodes[0]);
      await waitFor(async () => (await readLease())?.holder === 'a', { timeoutMs: RECOVERY_MS, what: 'a to take the lease' });
      await Promise.all(nodes.slice(1).map(boot));
      loops.push(watchLease());
    } else {
      tmpfs = join(dir.path, 'journal');
      mkdirSync(tmpfs);
      const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE}`, 'tmpfs', tmpfs], { encoding: 'utf8' });
      if (mounted.status !== 0) throw new Error(`mounting a tmpfs for the journal failed (it needs root): ${mounted.stderr}`);
      nodes.push({
        id: 'solo',
        stopped: false,
        svc: null,
        // The worktrees off the tmpfs: the disk fills when the campaign fills it, not as the merges' checkouts add up.
        env: { BRAINSTEM_JOURNAL_DIR: tmpfs, BRAINSTEM_WORKTREES_DIR: join(dir.path, 'worktrees'), BRAINSTEM_SUPERVISION_DEBOUNCE_MS: String(DEBOUNCE_MS), BRAINSTEM_MAIN_BRAIN_ROUND_TIMEOUT_S: String(ROUND_TIMEOUT_S) },
      });
      await boot(nodes[0]);
    }
    for (let i = 0; i < workerCount; i++) {
      const n = nodes[i % nodes.length];
      const s = await must(n, 'POST', '/coding-sessions', { runtime: 'command', command: process.execPath, args: [join(WORKERS, 'quiet.js')], cwd: dir.path, title: `worker ${i + 1}` });
      reaper.track(s.pid as number);
      sessions.push(s.id as string);
      runsOn.set(s.id as string, n);
    }
    await must(nodes[0], 'POST', '/session-os/main-brain/autonomous', { enabled: true, task_hint: 'the fault campaign', max_turns: MAX_TURNS });
    loops.push(traffic(), brain());
    await sleep(2000);
    await check('the start');

    const faults = (options.mode === 'pg' ? pgFaults : levelFaults).filter(([, name]) => !options.only || options.only.includes(name));
    if (faults.length === 0) throw new Error(`no fault of mode ${options.mode} is named ${options.only?.join(', ')}`);
    const firstPass = [...faults];
    for (let i = firstPass.length - 1; i > 0; i--) {
      const j = faultRandom.int(i + 1);
      [firstPass[i], firstPass[j]] = [firstPass[j], firstPass[i]];
    }
    for (let f = 1; f <= options.faults; f++) {
      await sleep(faultRandom.between(500, 2500));
      // Each kind once first, in an order of the seed's (so a short run has them all), then as their weights draw.
      const [, name, run] = f <= faults.length ? firstPass[f - 1] : faultRandom.weighted(faults.map((fault) => [fault[0], () => fault] as const));
      const started = Date.now();
      try {
        const said = await run();
        ledger.faults++;
        ledger.faultsByKind[name] = (ledger.faultsByKind[name] ?? 0) + 1;
        log(`fault ${f}/${options.faults} [${name}] ${said} (+${Date.now() - started} ms)`);
        await recovered();
      } catch (e) {
        if (!(e instanceof CampaignHalted)) throw e;
        ledger.faults++;
        ledger.faultsByKind[name] = (ledger.faultsByKind[name] ?? 0) + 1;
        ledger.violations.set(e.violation.key, e.violation);
        log(`fault ${f}/${options.faults} [${name}]: the service did not recover, the campaign stops here`);
        log(`  VIOLATION ${e.violation.invariant}: ${e.violation.detail}`);
        halted = true;
        break;
      }
      await check(`fault ${f}`);
    }

    // The last waits run out: every question asked must have had its round, or show as waiting too long.
    running = false;
    await Promise.all(loops.splice(0));
    let events = 0;
    if (!halted) {
      await sleep(BOUNDS.debounceMs + BOUNDS.leaseTtlMs + BOUNDS.slackMs + 1000);
      events = await check('the campaign');
    }
    if (options.mode === 'level') {
      // The node stopped, the journal opened from its files on their own, as `brainstem journal verify` does.
      await kill(nodes[0]);
      const fromDisk = async () => {
        const j = await openLevelJournal(tmpfs!);
        try {
          const verify = await j.verify();
          const all: JournalEvent[] = [];
          for (;;) {
            const page = await j.readAll(all.length, 1000);
            if (page.length === 0) break;
            all.push(...page);
          }
          return { verify, events: all };
        } finally {
          await j.close();
        }
      };
      try {
        events = await check('the node stopped (its LevelDB read from disk)', fromDisk);
      } catch (e) {
        const v: Violation = { invariant: 'chain_verifies', key: 'chain_verifies:open', detail: `the journal does not open from disk: ${(e as Error).message}` };
        ledger.violations.set(v.key, v);
        log(`  VIOLATION ${v.invariant}: ${v.detail}`);
      }
    } else if (halted) {
      events = await check('the campaign');
    }
    const violations = [...ledger.violations.values()];
    const result: CampaignResult = {
      mode: options.mode,
      seed: options.seed,
      faultsInjected: ledger.faults,
      faultsByKind: ledger.faultsByKind,
      invariantsChecked: ledger.invariantsChecked,
      violations,
      acknowledged: ledger.acknowledged.length,
      refused: ledger.refused.length,
      unanswered: ledger.unanswered,
      rounds: roundsSeen,
      events,
      durationMs: Date.now() - t0,
    };
    const codes = [...ledger.refusedCodes].map(([k, c]) => `${c}x ${k}`).join(', ');
    log(`writes: ${result.acknowledged} acknowledged, ${result.refused} refused${codes ? ` (${codes})` : ''}, ${result.unanswered} unanswered or 5xx, ${ledger.notTaken} not taken by the session's state; ${result.rounds} rounds taken by the brain; ${events} events`);
    log(`faults injected ${result.faultsInjected}, invariants checked ${result.invariantsChecked}, violations ${violations.length} (seed ${options.seed}, ${Math.round(result.durationMs / 1000)} s)`);
    return result;
  } catch (e) {
    log(`the campaign failed: ${(e as Error).stack ?? String(e)}`);
    for (const n of nodes) if (n.svc) log(`  node ${n.id}'s output ends:\n${n.svc.output().slice(-1500)}`);
    throw e;
  } finally {
    running = false;
    await Promise.allSettled(loops);
    for (const n of nodes) await kill(n).catch(() => undefined);
    reaper.killAll();
    repo.remove();
    await leases?.end().catch(() => undefined);
    cluster?.stop();
    if (tmpfs) {
      const unmounted = spawnSync('umount', [tmpfs], { encoding: 'utf8' });
      // Lazily, should a process still hold it: the tmpfs must not outlive the campaign.
      if (unmounted.status !== 0) spawnSync('umount', ['-l', tmpfs]);
    }
    dir.remove();
  }
}
