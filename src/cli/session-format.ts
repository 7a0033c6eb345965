import type { Pending } from '../sessions/session.events';
import type { SessionStatus } from '../sessions/session.status';
import type { AutonomousView } from '../supervision/supervision.view';
import { columns, oneLine } from './terminal-text';

/** How long ago, in the largest whole unit: `45s`, `3m`, `2h`, `4d`. */
export function ago(iso: string, now: number): string {
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** How long until, in whole units from the largest two down: `45s`, `42m`, `1h 5m`, `2d 3h`. */
function countdown(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const [h, d] = [Math.floor(m / 60), Math.floor(m / 1440)];
  if (d === 0) return `${h}h${m % 60 ? ` ${m % 60}m` : ''}`;
  return `${d}d${h % 24 ? ` ${h % 24}h` : ''}`;
}

/** A time on the terminal's own clock: `04:10` on the day of `now`, with its date on another. */
function clockTime(at: number, now: number): string {
  const [d, today] = [new Date(at), new Date(now)];
  const two = (n: number) => String(n).padStart(2, '0');
  const time = `${two(d.getHours())}:${two(d.getMinutes())}`;
  return d.toDateString() === today.toDateString() ? time : `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${time}`;
}

/**
 * A session parked at its model's limit, in a few words: which kind of limit, and when it resumes by itself (a
 * countdown and the clock time) or that it is kept parked until someone resumes it.
 */
export function parkedFlag(parked: NonNullable<SessionStatus['parked']>, now: number): string {
  const flag = `parked (${parked.reason.replace('_', ' ')})`;
  if (parked.resumes_at === null) return `${flag} · kept parked`;
  const at = Date.parse(parked.resumes_at);
  // Past its time it is still parked: its timer is about to fire, or its worker could not take the resume.
  if (at <= now) return `${flag} · resume due since ${clockTime(at, now)}`;
  return `${flag} · resumes in ${countdown(at - now)} (${clockTime(at, now)})`;
}

/** What the session waits for, in a few words: the permission's tool and command or file, the question, the block. */
export function pendingSummary(pending: Pending | null, max = 80): string {
  if (!pending) return '';
  if (pending.kind === 'question') return oneLine(`question: ${pending.question}`, max);
  if (pending.kind === 'blocked') return oneLine(`blocked: ${pending.reason}`, max);
  const input = pending.input as Record<string, unknown>;
  // The one field a person decides on, when the tool has one (Bash's command, Write's file); else the whole input.
  const subject = ['command', 'file_path', 'path', 'url'].map((k) => input[k]).find((v) => typeof v === 'string');
  return oneLine(`permission ${pending.tool}: ${typeof subject === 'string' ? subject : JSON.stringify(input)}`, max);
}

/** Dollars as a person reads them: cents, or four places below a cent; `~` when a price table estimated any of it. */
export function dollars(usd: number, estimated = false): string {
  return `${estimated ? '~' : ''}$${usd > 0 && usd < 0.01 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

/** What holds the session, or what it waits for: its request, its hold (a held session resumes only once released), its limit. */
function waitsFor(s: SessionStatus, max: number, now: number): string {
  if (s.pending) return pendingSummary(s.pending, max);
  if (s.held) return oneLine(`held: ${s.held.detail}`, max);
  return s.parked ? parkedFlag(s.parked, now) : '';
}

/** `brainstem ls`: one row per session, what it spent and what it waits for last. */
export function sessionTable(sessions: readonly SessionStatus[], now: number): string[] {
  if (sessions.length === 0) return ['no sessions'];
  const rows = sessions.map((s) => [s.alias, s.state, `${s.runtime}${unsandboxed(s) ? ' UNSANDBOXED' : ''}`, ago(s.state_since, now), dollars(s.usage.cost_usd, s.usage.cost_estimated), oneLine(s.title, 40), waitsFor(s, 60, now)]);
  return columns([['ALIAS', 'STATE', 'RUNTIME', 'SINCE', 'COST', 'TITLE', 'WAITS FOR'], ...rows]);
}

/** Marked in lists: a worker of Brainstem's that runs with the user's full rights (a service older than sandboxing says nothing). */
function unsandboxed(s: SessionStatus): boolean {
  return s.sandbox !== undefined && !s.sandbox.on && s.origin !== 'external';
}

function sandboxText(sandbox: SessionStatus['sandbox']): string {
  if (!sandbox.on || !sandbox.policy) return `off: ${sandbox.reason ?? 'unsandboxed'}`;
  const p = sandbox.policy;
  return `on: writes ${p.allow_write.length} path(s) (${oneLine(p.allow_write[0] ?? '', 60)}…), network ${p.network.allow.length} allowed, ${p.network.deny.length} denied, others asked`;
}

/** Its budget in a few words: each limit it has. */
function budgetText(b: NonNullable<SessionStatus['budget']>): string {
  return [b.tokens !== undefined ? `${b.tokens} tokens` : null, b.usd !== undefined ? dollars(b.usd) : null].filter((x) => x !== null).join(', ');
}

/** The rest of a parking: which limit, how many refusals in a row, since when, and whether its time is only a backoff. */
function parkedDetail(p: NonNullable<SessionStatus['parked']>, now: number): string {
  const backoff = p.source === 'backoff' ? ', a backoff (the runtime named no reset)' : '';
  const fallback = p.fallback_session_id ? `, its work goes on in ${p.fallback_session_id}` : '';
  return `${p.limit_type ? `${p.limit_type}, ` : ''}attempt ${p.attempt}${backoff}${fallback}, parked ${ago(p.since, now)} ago`;
}

/** `brainstem show`: every field a person reads, one per line. */
export function sessionDetail(s: SessionStatus, now: number): string[] {
  const rows: string[][] = [
    ['session', `${s.alias} (${s.id})`],
    ['title', s.title],
    ['state', `${s.state}${s.state_label ? ` (${s.state_label})` : ''} for ${ago(s.state_since, now)}`],
    ['runtime', `${s.runtime}${s.profile_id ? `, profile ${s.profile_id}` : ''}${s.node ? `, on node ${s.node}` : ''}`],
    ['folder', s.cwd],
    ...(s.external ? [['started', `outside Brainstem: claude session ${s.external.claude_session_id}`]] : []),
    ['supervised', s.supervised ? 'yes' : 'no (excluded)'],
    ...(s.sandbox ? [['sandbox', sandboxText(s.sandbox)]] : []),
    ['pid', s.pid === null ? '-' : `${s.pid}${s.detached ? ' (detached)' : ''}`],
    ['spent', `${s.usage.tokens} tokens, ${dollars(s.usage.cost_usd, s.usage.cost_estimated)} in ${s.usage.turns} turn(s)${s.budget ? `; budget ${budgetText(s.budget)}` : ''}`],
  ];
  if (s.worktree) rows.push(['worktree', `branch ${s.worktree.branch} (${s.worktree.state}) at ${s.worktree.path}`]);
  if (s.held) rows.push(['held', `${s.held.reason}: ${oneLine(s.held.detail, 160)} (${ago(s.held.since, now)} ago; brainstem release ${s.alias})`]);
  if (s.loop) rows.push(['loop', `${s.loop.pattern} ×${s.loop.count}: ${oneLine(s.loop.summary, 160)} (${ago(s.loop.detected_at, now)} ago)`]);
  if (s.parked) rows.push(['limit', `${parkedFlag(s.parked, now)}; ${parkedDetail(s.parked, now)} (brainstem resume ${s.alias})`]);
  if (s.rate_limit?.status === 'rejected') rows.push(['rate limit', `refused${s.rate_limit.resets_at ? ` until ${s.rate_limit.resets_at}` : ''}`]);
  if (s.last_progress) {
    rows.push(['progress', `${s.last_progress.status}${s.last_progress.message ? `: ${oneLine(s.last_progress.message, 100)}` : ''} (${ago(s.last_progress.at, now)} ago)`]);
  }
  if (s.pending?.kind === 'permission') {
    rows.push(['waits for', `permission ${s.pending.request_id}: ${s.pending.tool} ${JSON.stringify(s.pending.input)}`]);
  } else if (s.pending) rows.push(['waits for', pendingSummary(s.pending, 200)]);
  for (const q of s.queued_permissions) rows.push(['queued', `permission ${q.request_id}: ${q.tool} ${JSON.stringify(q.input)}`]);
  if (s.state === 'exited') {
    rows.push(['exit', `${s.exit_reason ?? 'exited'}${s.exit_code !== null ? `, code ${s.exit_code}` : ''}${s.exit_signal ? `, signal ${s.exit_signal}` : ''}`]);
  }
  rows.push(['created', `${s.created_at} (${ago(s.created_at, now)} ago)`]);
  return columns(rows);
}

/** Supervision in a line: on with its goal and turns, or off (and why it closed). */
export function supervisionLine(a: AutonomousView | null): string {
  if (a === null) return 'off (never turned on)';
  if (!a.enabled) return `off${a.closed_reason ? ` (${a.closed_reason})` : ''}`;
  const goal = a.task_hint ? `goal "${oneLine(a.task_hint, 60)}", ` : '';
  return `on: ${goal}${a.turns_used} of ${a.max_turns} turns used${a.round_in_flight ? `, round ${a.round_in_flight} running` : ''}`;
}
