import { CacheUsage, estimateTokens } from './prompt-cache';
import type { BrainCall } from './scenario-brain';

/** A journal event as GET /journal/events gives it (what the metrics read of it). */
export interface JournalRecord {
  seq: number;
  stream: string;
  type: string;
  at: string;
  data: unknown;
}

interface Reason {
  session_id: string;
  alias: string;
  trigger: string;
  state: string | null;
  message: string | null;
  since?: string;
  evidence?: string;
}

/** A round as GET /session-os/main-brain/rounds gives it. */
export interface RoundRecord {
  id: string;
  status: string;
  prompt: string;
  reasons: Reason[];
}

/** One request of the brain's conversation as the fake model API counted it. */
export interface BrainRequest {
  /** Epoch ms the fake answered it. */
  at: number;
  model: string;
  /** The round the scripted brain was in when it answered (null before the first). */
  round: string | null;
  usage: CacheUsage;
  output_tokens: number;
  /** The tool the answer called, if any, and the session it named. */
  tool: string | null;
  session: string | null;
  /** Whether the request carried a round prompt (its last user message names a round). */
  round_prompt: boolean;
}

export interface ScenarioInput {
  journal: JournalRecord[];
  rounds: RoundRecord[];
  brainRequests: BrainRequest[];
  brainCalls: ReadonlyMap<string, readonly BrainCall[]>;
  prices: (model: string, usage: CacheUsage & { output_tokens: number }) => number;
}

export interface Spread {
  p50: number;
  p99: number;
  n: number;
}

export interface ScenarioReport {
  rounds: number;
  rounds_by_status: Record<string, number>;
  stale_facts: number;
  stale_examples: string[];
  nothing_to_act_on: number;
  /** A few of them: the round, its reasons (alias, trigger, state then) and the brain's calls. */
  nothing_examples: string[];
  /** Permissions pending at a round's start on a session its reasons name, and how many of them the prompt shows with their id and input. */
  permissions_in_rounds: number;
  permissions_shown: number;
  fresh_per_round: Spread;
  cache_write_per_round: Spread;
  cache_read_per_round: Spread;
  output_per_round: Spread;
  facts_per_round: Spread;
  total: { fresh: number; cache_write: number; cache_read: number; output: number; dollars: number; facts: number };
  /** Of every input token over the run, the share read from the cache. */
  cache_read_share: number;
  latency: { to_round: Spread; to_first_call: Spread; to_going_on: Spread; round_to_delivery: Spread; round_to_api: Spread };
  triggers: number;
  attention_lost: number;
  lost_examples: string[];
  confirmations: number;
  notices: number;
  merges: number;
  /** Workers parked at their model's limit (each refusal by the limit), resumed by their own timer, and rounds a limit woke. */
  limits: { parked: number; resumed_by_itself: number; rounds_woken: number };
  /** The models the brain's requests named. */
  models: string[];
}

/** The p-th percentile (nearest rank) of xs; NaN when empty. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

const spread = (xs: readonly number[]): Spread => ({ p50: percentile(xs, 50), p99: percentile(xs, 99), n: xs.length });
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

const WAITING = new Set(['pending_handling', 'pending_authorization', 'pending_decision']);
/** Triggers that are news to act on whatever the session's state (a loop, a budget, a milestone, an exit). */
const NEWS = /^(loop_|budget_|progress_|notify_blocked|worker_exited|rate_limited|ask_human)/;
/** Session events that call for the brain without a waiting state. */
const NEWS_EVENTS = new Set(['session.loop_detected', 'session.budget_warning', 'session.budget_exceeded']);

const sessionOf = (stream: string): string | null => (stream.startsWith('session-') ? stream.slice('session-'.length) : null);

interface Trigger {
  session: string;
  seq: number;
  at: number;
  what: string;
  /** A waiting state the session entered (latency runs to its leaving it), or null for news. */
  waits: boolean;
}

/** A round as the journal started it, with what each session's state was then. */
interface StartedRound {
  id: string;
  seq: number;
  started_at: number;
  reasons: Reason[];
  states: Map<string, string>;
  permissions: Map<string, Array<{ request_id: string; tool: string; input: unknown }>>;
  goal: string;
}

/**
 * Everything the bench prints of one run, from the journal (the truth: states, rounds, triggers, in seq order), the
 * rounds the API lists (their prompts), and the brain's requests as the fake API counted them.
 * - Stale fact: a reason whose state, as round.started journaled it, differs from the session's state at that seq.
 * - Nothing to act on: no reason names a session waiting (or news: a loop, a budget, a milestone) at round start, or the
 *   brain called nothing but complete_round.
 * - Trigger: a session entering a waiting state, or a loop or budget event; covered by the first round started after
 *   it naming the session. Attention lost: a trigger no completed round covered and whose session never went on.
 * - Fresh input: what was not read from the cache (input_tokens, and cache_creation_input_tokens: written, not read);
 *   claude marks its last message as a breakpoint, so nearly all fresh input is cache writes.
 * - Facts per round: the bytes of what the round must say (its reasons, the pending permissions of the sessions they
 *   name, the goal) as JSON, as tokens (bytes / 4): the lower bound of a prompt.
 */
export function scenarioReport(input: ScenarioInput): ScenarioReport {
  const states = new Map<string, string>();
  const permissions = new Map<string, Map<string, { request_id: string; tool: string; input: unknown }>>();
  const started: StartedRound[] = [];
  const ended = new Map<string, string>();
  const triggers: Trigger[] = [];
  const wentOn: Array<{ session: string; seq: number; at: number }> = [];
  const deliveries = new Map<string, number>();
  let goal = '';
  let confirmations = 0;
  let notices = 0;
  let merges = 0;
  const limits = { parked: 0, resumed_by_itself: 0, rounds_woken: 0 };
  for (const e of input.journal) {
    const d = (e.data ?? {}) as Record<string, unknown>;
    const session = sessionOf(e.stream);
    const at = typeof d.at === 'number' ? d.at : Date.parse(e.at);
    if (e.type === 'session.state_changed' && session) {
      const to = String(d.to);
      if (WAITING.has(to) && !WAITING.has(String(d.from))) triggers.push({ session, seq: e.seq, at, what: to, waits: true });
      if (WAITING.has(String(d.from)) && !WAITING.has(to)) wentOn.push({ session, seq: e.seq, at });
      states.set(session, to);
    } else if (NEWS_EVENTS.has(e.type) && session) {
      triggers.push({ session, seq: e.seq, at, what: e.type, waits: false });
    } else if (e.type === 'session.permission_requested' && session) {
      const m = permissions.get(session) ?? new Map();
      m.set(String(d.request_id), { request_id: String(d.request_id), tool: String(d.tool), input: d.input });
      permissions.set(session, m);
    } else if (e.type === 'session.permission_resolved' && session) {
      permissions.get(session)?.delete(String(d.request_id));
    } else if (e.type === 'supervision.enabled' && typeof d.task_hint === 'string') {
      goal = d.task_hint;
    } else if (e.type === 'round.started') {
      const round = d.round as { id: string; started_at: number; reasons: Reason[] };
      if (round.reasons.some((r) => r.trigger === 'rate_limited')) limits.rounds_woken++;
      const named = new Set(round.reasons.map((r) => r.session_id));
      started.push({
        id: round.id,
        seq: e.seq,
        started_at: round.started_at,
        reasons: round.reasons,
        states: new Map([...named].filter((s) => states.has(s)).map((s) => [s, states.get(s)!])),
        permissions: new Map([...named].map((s) => [s, [...(permissions.get(s)?.values() ?? [])]])),
        goal,
      });
    } else if (e.type.startsWith('round.') && typeof d.round_id === 'string') {
      ended.set(d.round_id, e.type.slice('round.'.length));
    } else if (e.type === 'brain.turn_started' && typeof d.round_id === 'string' && !deliveries.has(d.round_id)) {
      deliveries.set(d.round_id, Date.parse(e.at));
    } else if (e.type === 'session.worktree_merged') {
      merges++;
    } else if (e.type === 'session.parked' && (d.source === 'runtime' || d.source === 'backoff')) {
      limits.parked++;
    } else if (e.type === 'session.unparked' && d.by === 'timer') {
      limits.resumed_by_itself++;
    } else if (e.type === 'confirmation.requested') {
      confirmations++;
    } else if (e.type === 'chat.message' && d.kind === 'notice') {
      notices++;
    }
  }

  const prompts = new Map(input.rounds.map((r) => [r.id, r.prompt]));
  let stale = 0;
  const staleExamples: string[] = [];
  let nothing = 0;
  const nothingExamples: string[] = [];
  let permissionsInRounds = 0;
  let permissionsShown = 0;
  const facts: number[] = [];
  for (const r of started) {
    for (const reason of r.reasons) {
      if (reason.session_id === '-' || reason.state === null) continue;
      const now = r.states.get(reason.session_id);
      if (now !== undefined && now !== reason.state) {
        stale++;
        if (staleExamples.length < 5) staleExamples.push(`${r.id}: ${reason.alias} ${reason.trigger} says ${reason.state}, was ${now}`);
      }
    }
    const actionable = r.reasons.some((x) => x.session_id !== '-' && (WAITING.has(r.states.get(x.session_id) ?? '') || NEWS.test(x.trigger)));
    const calls = input.brainCalls.get(r.id) ?? [];
    if (!actionable || calls.every((c) => c.tool === 'complete_round')) {
      nothing++;
      const why = r.reasons.map((x) => `${x.alias} ${x.trigger} (${r.states.get(x.session_id) ?? '-'})`).join(', ');
      if (nothingExamples.length < 5) nothingExamples.push(`${r.id}: ${why}; calls ${calls.map((c) => c.tool).join(', ') || 'none'}`);
    }
    const prompt = prompts.get(r.id) ?? '';
    const pending = [...r.permissions.values()].flat();
    permissionsInRounds += pending.length;
    permissionsShown += pending.filter((p) => prompt.includes(p.request_id) && inputShown(prompt, p.input)).length;
    facts.push(estimateTokens(JSON.stringify({ round: r.id, goal: r.goal, reasons: r.reasons, permissions: pending })));
  }

  const perRound = new Map<string, BrainRequest[]>();
  for (const q of input.brainRequests) if (q.round) perRound.set(q.round, [...(perRound.get(q.round) ?? []), q]);
  const roundSums = [...perRound.values()].map((qs) => ({
    fresh: sum(qs.map((q) => q.usage.input_tokens + q.usage.cache_creation_input_tokens)),
    write: sum(qs.map((q) => q.usage.cache_creation_input_tokens)),
    read: sum(qs.map((q) => q.usage.cache_read_input_tokens)),
    output: sum(qs.map((q) => q.output_tokens)),
  }));
  const all = input.brainRequests;
  const total = {
    fresh: sum(all.map((q) => q.usage.input_tokens + q.usage.cache_creation_input_tokens)),
    cache_write: sum(all.map((q) => q.usage.cache_creation_input_tokens)),
    cache_read: sum(all.map((q) => q.usage.cache_read_input_tokens)),
    output: sum(all.map((q) => q.output_tokens)),
    dollars: sum(all.map((q) => input.prices(q.model, { ...q.usage, output_tokens: q.output_tokens }))),
    facts: sum(facts),
  };

  const toRound: number[] = [];
  const toFirstCall: number[] = [];
  const toGoingOn: number[] = [];
  let lost = 0;
  const lostExamples: string[] = [];
  for (const t of triggers) {
    const covering = started.filter((r) => r.seq > t.seq && r.reasons.some((x) => x.session_id === t.session));
    const first = covering[0];
    const goneOn = t.waits ? wentOn.find((w) => w.session === t.session && w.seq > t.seq) : undefined;
    const handled = covering.some((r) => ended.get(r.id) === 'completed');
    if (!handled && !goneOn) {
      lost++;
      if (lostExamples.length < 5) lostExamples.push(`${t.what} of ${t.session} at seq ${t.seq}: ${covering.length ? `rounds ${covering.map((r) => `${r.id} ${ended.get(r.id) ?? 'in flight'}`).join(', ')}` : 'no round named it'}`);
    }
    if (!first) continue;
    toRound.push(first.started_at - t.at);
    const call = input.brainRequests.find((q) => q.round === first.id && q.session === t.session);
    if (!call) continue;
    toFirstCall.push(call.at - t.at);
    if (goneOn && goneOn.seq > first.seq) toGoingOn.push(goneOn.at - t.at);
  }
  const roundToDelivery = started.filter((r) => deliveries.has(r.id)).map((r) => deliveries.get(r.id)! - r.started_at);
  const roundToApi = started.flatMap((r) => {
    const q = input.brainRequests.find((x) => x.round === r.id && x.round_prompt);
    return q ? [q.at - r.started_at] : [];
  });

  const byStatus: Record<string, number> = {};
  for (const r of started) {
    const s = ended.get(r.id) ?? 'in_flight';
    byStatus[s] = (byStatus[s] ?? 0) + 1;
  }
  const inputTokens = total.fresh + total.cache_read;
  return {
    rounds: started.length,
    rounds_by_status: byStatus,
    stale_facts: stale,
    stale_examples: staleExamples,
    nothing_to_act_on: nothing,
    nothing_examples: nothingExamples,
    permissions_in_rounds: permissionsInRounds,
    permissions_shown: permissionsShown,
    fresh_per_round: spread(roundSums.map((s) => s.fresh)),
    cache_write_per_round: spread(roundSums.map((s) => s.write)),
    cache_read_per_round: spread(roundSums.map((s) => s.read)),
    output_per_round: spread(roundSums.map((s) => s.output)),
    facts_per_round: spread(facts),
    total,
    cache_read_share: inputTokens ? total.cache_read / inputTokens : NaN,
    latency: { to_round: spread(toRound), to_first_call: spread(toFirstCall), to_going_on: spread(toGoingOn), round_to_delivery: spread(roundToDelivery), round_to_api: spread(roundToApi) },
    triggers: triggers.length,
    attention_lost: lost,
    lost_examples: lostExamples,
    confirmations,
    notices,
    merges,
    limits,
    models: [...new Set(input.brainRequests.map((q) => q.model))],
  };
}

/** Whether a prompt shows a permission's input: every string in it, as JSON would quote it or as it is. */
function inputShown(prompt: string, input: unknown): boolean {
  const strings: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') strings.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(input);
  return strings.every((s) => prompt.includes(s) || prompt.includes(JSON.stringify(s).slice(1, -1)));
}
