import { LaunchSpec, RuntimeReport, RuntimeSink, WorkerHandle } from '../../src/sessions/runtimes/runtime.port';
import { needsAttention } from '../../web/src/attention-queue';
import type { Session } from '../../web/src/types';
import { GitRepo, gitRepo } from './git-repo';
import { InertRuntime } from './inert-runtime';
import { tempDir } from './temp-dir';
import { TestApp } from './test-app';

// No jest globals here: the dashboard bench seeds its sessions with it too.

/** The process-less runtime, keeping each worker's sink: what a real worker would report (usage, a permission request) is reported through it. */
export class ReportingRuntime extends InertRuntime {
  private readonly sinks = new Map<string, RuntimeSink>();

  override start(spec: LaunchSpec, sink: RuntimeSink): WorkerHandle {
    this.sinks.set(spec.session_id, sink);
    return super.start(spec, sink);
  }

  /** Reports as the session's worker, settled once the service acted on it. */
  async report(sessionId: string, report: RuntimeReport): Promise<void> {
    const sink = this.sinks.get(sessionId);
    if (!sink) throw new Error(`no worker started for ${sessionId}`);
    sink.report(report);
    await sink.reported?.();
  }
}

/** Sessions seeded as a dashboard of many sessions shows them: who waits, on what, and what they spent. */
export interface ManySessions {
  /** Every session, in creation order. */
  ids: string[];
  /** Waiting on a question (ask_human). */
  asking: string[];
  /** Waiting on a permission request (Bash). */
  permissions: string[];
  /** A loop detected (the same block five times). */
  loops: string[];
  /** Held: their usage ran past their own budget. */
  held: string[];
  /** With a git worktree of their own. */
  worktrees: string[];
  /** Sharing one git checkout (each warned of the others). */
  sharing: string[];
  /** With usage reported (1 to 4 turns). */
  spending: string[];
  /** How many need attention, by the page's own rule, as the service lists them. */
  attention: number;
  remove(): void;
}

export interface ManySessionsOptions {
  count: number;
  /** How many of each kind of wait, taken from the first sessions in this order; the rest work. */
  asking?: number;
  permissions?: number;
  loops?: number;
  held?: number;
  /** One session in `worktreeEvery` gets a worktree; one in `sharingEvery` runs in the shared checkout. */
  worktreeEvery?: number;
  sharingEvery?: number;
  /** One session in `spendingEvery` reports usage. */
  spendingEvery?: number;
}

/** Projects the sessions run in (plain folders, no git): a user's few repositories, each with many sessions. */
const PROJECTS = 20;

/**
 * Creates `count` sessions on the process-less runtime (registered under `inert` by the caller) with what a busy day has:
 * questions, permission requests, loops, sessions held by their budget, usage, worktrees and a shared checkout. Everything
 * goes through the API or the worker's sink, so the journal and the statuses are the service's own.
 */
export async function seedManySessions(t: TestApp, runtime: ReportingRuntime, options: ManySessionsOptions): Promise<ManySessions> {
  const o = { asking: 100, permissions: 30, loops: 10, held: 10, worktreeEvery: 33, sharingEvery: 200, spendingEvery: 3, ...options };
  const projects: Array<ReturnType<typeof tempDir>> = Array.from({ length: PROJECTS }, (_, i) => tempDir(`brainstem-project-${i}-`));
  const repos: GitRepo[] = [gitRepo({ 'app.js': 'console.log(1);\n' }, 'brainstem-isolated-'), gitRepo({ 'app.js': 'console.log(2);\n' }, 'brainstem-shared-')];
  const [isolated, shared] = repos;
  const call = async (method: 'POST' | 'PATCH', url: string, payload: object, headers?: Record<string, string>): Promise<Record<string, unknown>> => {
    const res = await t.inject({ method, url: `/api/v1${url}`, payload, headers });
    if (res.statusCode !== 200 && res.statusCode !== 201) throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body}`);
    return res.json();
  };
  const out: ManySessions = { ids: [], asking: [], permissions: [], loops: [], held: [], worktrees: [], sharing: [], spending: [], attention: 0, remove: () => [...projects, ...repos].forEach((d) => d.remove()) };
  const bounds = { asking: o.asking, permissions: o.asking + o.permissions, loops: o.asking + o.permissions + o.loops, held: o.asking + o.permissions + o.loops + o.held };
  for (let i = 0; i < o.count; i++) {
    const where =
      i % o.worktreeEvery === o.worktreeEvery - 1
        ? { cwd: isolated.path, isolation: 'worktree' }
        : i % o.sharingEvery === o.sharingEvery - 2
          ? { cwd: shared.path, isolation: 'none' }
          : { cwd: projects[i % PROJECTS].path };
    const s = await call('POST', '/coding-sessions', { runtime: 'inert', title: `session ${i} of the day`, ...where });
    const id = String(s.id);
    out.ids.push(id);
    if (where.isolation === 'worktree') out.worktrees.push(id);
    if (where.cwd === shared.path) out.sharing.push(id);
  }
  const worker = (id: string) => t.auth({ worker: id });
  const spend = (id: string, turn: number, tokens: number) =>
    runtime.report(id, { kind: 'usage', entries: [{ model: 'claude-sonnet-4-5', input_tokens: tokens, output_tokens: Math.round(tokens / 10), cache_read_tokens: tokens * 3, cache_write_tokens: 100 + turn, cost_usd: null }] });
  for (let i = 0; i < o.count; i++) {
    const id = out.ids[i];
    if (i % o.spendingEvery === 0) {
      for (let turn = 0; turn <= i % 4; turn++) await spend(id, turn, 800 + ((i * 37 + turn * 101) % 9000));
      out.spending.push(id);
    }
    if (i < bounds.asking) {
      await call('POST', `/coding-sessions/${id}/signals`, { type: 'ask_human', question: `question ${i}: which way?` }, worker(id));
      out.asking.push(id);
    } else if (i < bounds.permissions) {
      await runtime.report(id, { kind: 'permission_requested', request_id: `req-${i}`, tool: 'Bash', input: { command: `npm test -- --shard=${i}`, description: 'Run the tests' } });
      out.permissions.push(id);
    } else if (i < bounds.loops) {
      for (let k = 0; k < 5; k++) await call('POST', `/coding-sessions/${id}/signals`, { type: 'notify_blocked', reason: `cannot find fixtures for case ${i}` }, worker(id));
      out.loops.push(id);
    } else if (i < bounds.held) {
      await call('PATCH', `/coding-sessions/${id}/budget`, { tokens: 1000 });
      await spend(id, 9, 5000);
      out.held.push(id);
    }
  }
  const listed = await t.inject({ method: 'GET', url: `/api/v1/coding-sessions?limit=${o.count}` });
  if (listed.statusCode !== 200) throw new Error(`list answered ${listed.statusCode}: ${listed.body}`);
  const now = Date.now();
  out.attention = (listed.json().sessions as Session[]).filter((s) => needsAttention(s, now)).length;
  return out;
}
