/**
 * The fault campaign's invariants (bench/README.md, The fault campaign), pure: what the journal, read after a fault,
 * must show given what the service acknowledged, what it refused, when the leader changed and when nothing could serve.
 * Time is an input; nothing here reads a clock, a file or the network.
 */

/** One journaled event, as read back (the fields the invariants look at). */
export interface JournalRecord {
  seq: number;
  stream: string;
  type: string;
  /** ISO. */
  at: string;
  data: unknown;
  hash: string;
}

/** A write the service answered 2xx: what it must have journaled, once, and kept. */
export type Write =
  /** A signal: `key` is the question (ask_human) or the turn's result (turn_ended), unique in the campaign. */
  | { kind: 'signal'; session_id: string; event_type: 'session.asked_human' | 'session.turn_ended'; key: string }
  /** The brain's answer to a question: a message whose text is answerTo(question). */
  | { kind: 'answer'; session_id: string; key: string }
  /** A round completed by the brain. */
  | { kind: 'completion'; round_id: string };

/** A write refused with a definite answer (4xx, or a 503 naming its code): none of it may be in the journal. */
export interface Refusal {
  write: Write;
  status: number;
  code: string | null;
}

/** The supervisor lease passed to another node (PostgreSQL), or the only node came back after a restart (LevelDB). */
export interface LeaderChange {
  /** Epoch ms: when the new leader took the lease (or the restarted node answered). */
  at: number;
  holder: string;
}

/** A span in which no node could serve (the journal's database down, the only node dead, stopped or its disk full). */
export interface Outage {
  from: number;
  to: number;
  what: string;
}

/** What the service answered a write while the journal's disk was full. */
export interface FullDiskAnswer {
  /** 0: no answer came (the connection was refused or reset, or it timed out). */
  status: number;
  code: string | null;
}

/** A worktree merge the campaign asked for (and killed its owner during), as git has it at the check. */
export interface MergeProbe {
  session_id: string;
  /** The merge was answered 200. */
  acknowledged: boolean;
  /** The session's branch is in the base branch. */
  in_git: boolean;
  /** git left a merge half done in the checkout (MERGE_HEAD). */
  half_done: boolean;
}

export interface FaultHistory {
  /** The journal's own audit of its hash chain. */
  verify: { ok: boolean; error?: string; first_bad_seq?: number };
  /** Every event, in seq order. */
  events: readonly JournalRecord[];
  acknowledged: readonly Write[];
  refused: readonly Refusal[];
  /** seq → hash of every event earlier checks read: history is only ever appended to. */
  seen: ReadonlyMap<number, string>;
  leaderChanges: readonly LeaderChange[];
  outages: readonly Outage[];
  /** Every answer to a write while the disk was full: each a 2xx (it was written) or a 503 naming its code. */
  fullDiskAnswers: readonly FullDiskAnswer[];
  merges: readonly MergeProbe[];
  /** Epoch ms of this check. */
  now: number;
}

export interface Bounds {
  debounceMs: number;
  leaseTtlMs: number;
  /** What the issue allows beyond the debounce and the lease TTL: 2 s. */
  slackMs: number;
}

export type InvariantName =
  | 'chain_verifies'
  | 'history_unchanged'
  | 'acknowledged_kept'
  | 'refused_absent'
  | 'full_disk_refused_clearly'
  | 'attention_served'
  | 'stale_round_interrupted'
  | 'single_wake'
  | 'single_answer'
  | 'merge_consistent';

export const INVARIANTS: readonly InvariantName[] = [
  'chain_verifies',
  'history_unchanged',
  'acknowledged_kept',
  'refused_absent',
  'full_disk_refused_clearly',
  'attention_served',
  'stale_round_interrupted',
  'single_wake',
  'single_answer',
  'merge_consistent',
];

export interface Violation {
  invariant: InvariantName;
  /** Stable across checks: the same violation seen again after the next fault is one violation. */
  key: string;
  detail: string;
}

/** The text of the brain's answer to a question: how the journal tells which question a message answers. */
export const answerTo = (question: string): string => `answer to ${question}`;

/** A wait on someone, as supervision sees it: from the event that began it until the next that changed it. */
export interface Attention {
  session_id: string;
  trigger: 'ask_human' | 'pending_handling' | 'notify_blocked' | 'pending_authorization';
  /** Epoch ms: the event's own time, which a round's reason gives as `since`. */
  since: number;
  /** The question, result or reason it began with. */
  key: string;
  /** Epoch ms of the event that ended it; null while it lasts. */
  ended: number | null;
}

export interface Round {
  id: string;
  started_at: number;
  reasons: ReadonlyArray<{ session_id: string; trigger: string; since?: string }>;
  outcome: 'completed' | 'timed_out' | 'interrupted' | 'failed' | null;
  ended_at: number | null;
}

const ATTENTION_TRIGGERS: ReadonlySet<string> = new Set(['ask_human', 'pending_handling', 'notify_blocked', 'pending_authorization']);
/** Session events after which what the session waited on is over (a new wait, a message, its end, its exclusion). */
const ENDS_ATTENTION: ReadonlySet<string> = new Set([
  'session.asked_human',
  'session.turn_ended',
  'session.blocked',
  'session.permission_requested',
  'session.message_dispatched',
  'session.exited',
  'session.external_activity',
  'session.exclusion_changed',
]);

type Data = Record<string, unknown>;
const data = (e: JournalRecord): Data => (e.data ?? {}) as Data;
const atOf = (e: JournalRecord): number => (typeof data(e).at === 'number' ? (data(e).at as number) : Date.parse(e.at));
const sessionOf = (stream: string): string | null => (stream.startsWith('session-') ? stream.slice('session-'.length) : null);

/** What began a wait, or null for an event that begins none. */
function beginning(e: JournalRecord): Pick<Attention, 'trigger' | 'key'> | null {
  const d = data(e);
  switch (e.type) {
    case 'session.asked_human':
      return { trigger: 'ask_human', key: String(d.question) };
    case 'session.turn_ended':
      return d.superseded === true ? null : { trigger: 'pending_handling', key: String(d.result) };
    case 'session.blocked':
      return { trigger: 'notify_blocked', key: String(d.reason) };
    case 'session.permission_requested':
      return { trigger: 'pending_authorization', key: String(d.request_id) };
    default:
      return null;
  }
}

/** Every wait the sessions' streams show, each ended by the next event that changed it. */
export function attentionsOf(events: readonly JournalRecord[]): Attention[] {
  const open = new Map<string, Attention>();
  const all: Attention[] = [];
  for (const e of events) {
    const session = sessionOf(e.stream);
    if (session === null) continue;
    const ends = ENDS_ATTENTION.has(e.type) && !(e.type === 'session.turn_ended' && data(e).superseded === true);
    const current = open.get(session);
    if (ends && current) {
      current.ended = atOf(e);
      open.delete(session);
    }
    if (e.type === 'session.exclusion_changed' && data(e).excluded === false) continue;
    const begun = beginning(e);
    if (begun) {
      const a: Attention = { session_id: session, ...begun, since: atOf(e), ended: null };
      open.set(session, a);
      all.push(a);
    }
  }
  return all;
}

const OUTCOMES: Record<string, Round['outcome']> = {
  'round.completed': 'completed',
  'round.timed_out': 'timed_out',
  'round.interrupted': 'interrupted',
  'round.failed': 'failed',
};

/** The rounds the supervision stream shows, with how and when each ended. */
export function roundsOf(events: readonly JournalRecord[]): Round[] {
  const byId = new Map<string, Round>();
  for (const e of events) {
    if (e.stream !== 'supervision') continue;
    const d = data(e);
    if (e.type === 'round.started') {
      const r = d.round as { id: string; started_at: number; reasons: Round['reasons'] };
      byId.set(r.id, { id: r.id, started_at: r.started_at, reasons: r.reasons, outcome: null, ended_at: null });
    } else if (e.type in OUTCOMES) {
      const r = byId.get(String(d.round_id));
      if (r && r.outcome === null) {
        r.outcome = OUTCOMES[e.type];
        r.ended_at = Date.parse(e.at);
      }
    }
  }
  return [...byId.values()];
}

/** Whether the round's reasons name this wait: the same session, a waiting trigger, and (when given) the same since. */
export function names(round: Round, a: Attention): boolean {
  return round.reasons.some(
    (r) =>
      r.session_id === a.session_id &&
      ATTENTION_TRIGGERS.has(r.trigger) &&
      (r.since !== undefined ? Date.parse(r.since) === a.since : round.started_at >= a.since && round.started_at < (a.ended ?? Infinity)),
  );
}

/** The length of the union of the spans, clipped to [from, to]. */
function covered(spans: ReadonlyArray<readonly [number, number]>, from: number, to: number): number {
  const clipped = spans
    .map(([a, b]) => [Math.max(a, from), Math.min(b, to)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let sum = 0;
  let reach = from;
  for (const [a, b] of clipped) {
    if (b <= reach) continue;
    sum += b - Math.max(a, reach);
    reach = b;
  }
  return sum;
}

/**
 * The spans a wait is not counted in: while another round is in flight (one at a time), unless the leader changed
 * during it; then only until the change, which must interrupt it at once (stale_round_interrupted); and outages.
 */
function excused(a: Attention, rounds: readonly Round[], changes: readonly LeaderChange[], outages: readonly Outage[], now: number): Array<readonly [number, number]> {
  const busy = rounds
    .filter((r) => !names(r, a))
    .map((r) => [r.started_at, Math.min(r.ended_at ?? now, changes.find((c) => c.at > r.started_at)?.at ?? Infinity)] as const);
  return [...busy, ...outages.map((o) => [o.from, o.to] as const)];
}

const keyOf = (w: Write): string =>
  w.kind === 'completion' ? `completion:${w.round_id}` : `${w.kind}:${w.session_id}:${w.kind === 'signal' ? w.event_type : 'message'}:${w.key}`;

/** How many journaled events are this write. */
function occurrences(w: Write, events: readonly JournalRecord[]): number {
  switch (w.kind) {
    case 'signal':
      return events.filter((e) => e.stream === `session-${w.session_id}` && e.type === w.event_type && beginning(e)?.key === w.key).length;
    case 'answer':
      return events.filter((e) => e.stream === `session-${w.session_id}` && e.type === 'session.message_dispatched' && data(e).text === answerTo(w.key)).length;
    case 'completion':
      return events.filter((e) => e.stream === 'supervision' && e.type === 'round.completed' && data(e).round_id === w.round_id).length;
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

type MergeOutcome = { merged: boolean; code: string | null } | 'pending' | 'never_asked';

/** How the session's last merge ended, as its stream says: merged, failed with a code, pending, or never asked (cut off before). */
function mergeOutcome(events: readonly JournalRecord[], session: string): MergeOutcome {
  let outcome: MergeOutcome = 'never_asked';
  for (const e of events) {
    if (e.stream !== `session-${session}`) continue;
    if (e.type === 'session.worktree_op_requested' && data(e).op === 'merge') outcome = 'pending';
    else if (e.type === 'session.worktree_merged') outcome = { merged: true, code: null };
    else if (e.type === 'session.worktree_op_failed') outcome = { merged: false, code: String(data(e).code) };
  }
  return outcome;
}

/**
 * Every invariant over one history: which were checked and what violated them. The wait bound is
 * debounce + lease TTL + slack, less any outage the wait overlapped.
 */
export function checkInvariants(h: FaultHistory, b: Bounds): { checked: InvariantName[]; violations: Violation[] } {
  const v: Violation[] = [];
  const add = (invariant: InvariantName, key: string, detail: string) => v.push({ invariant, key: `${invariant}:${key}`, detail });

  if (!h.verify.ok) add('chain_verifies', `${h.verify.first_bad_seq ?? '?'}`, `the journal does not verify: ${h.verify.error ?? 'no reason given'} (first bad seq ${h.verify.first_bad_seq ?? '?'})`);

  const bySeq = new Map(h.events.map((e) => [e.seq, e]));
  h.events.forEach((e, i) => {
    if (e.seq !== i + 1) add('history_unchanged', `gap:${i + 1}`, `seq ${i + 1} is missing: event ${i} has seq ${e.seq}`);
  });
  for (const [seq, hash] of h.seen) {
    const now = bySeq.get(seq);
    if (!now) add('history_unchanged', `lost:${seq}`, `event ${seq} (hash ${hash.slice(0, 12)}) read at an earlier check is gone`);
    else if (now.hash !== hash) add('history_unchanged', `changed:${seq}`, `event ${seq} changed: hash ${hash.slice(0, 12)} then, ${now.hash.slice(0, 12)} now`);
  }

  for (const w of h.acknowledged) {
    const n = occurrences(w, h.events);
    if (n === 0) add('acknowledged_kept', keyOf(w), `acknowledged ${keyOf(w)} is not in the journal${w.kind === 'completion' ? ` (${roundsOf(h.events).some((r) => r.id === w.round_id) ? 'its round.started is' : 'nor is its round.started'})` : ''}`);
    else if (n > 1 && w.kind !== 'answer') add('acknowledged_kept', keyOf(w), `acknowledged ${keyOf(w)} is in the journal ${n} times`);
  }
  for (const r of h.refused) {
    if (occurrences(r.write, h.events) > 0) add('refused_absent', keyOf(r.write), `${keyOf(r.write)} was refused (${r.status} ${r.code ?? 'no code'}) yet is in the journal`);
  }

  const unclear = new Map<string, number>();
  for (const a of h.fullDiskAnswers) {
    if ((a.status >= 200 && a.status < 300) || (a.status === 503 && a.code !== null)) continue;
    const k = a.status === 0 ? 'no answer' : `${a.status} ${a.code ?? 'without a code'}`;
    unclear.set(k, (unclear.get(k) ?? 0) + 1);
  }
  for (const [k, n] of unclear) add('full_disk_refused_clearly', k, `${n} write(s) answered ${k} while the disk was full (expected a 503 naming its code)`);

  const rounds = roundsOf(h.events).sort((x, y) => x.started_at - y.started_at);
  const changes = [...h.leaderChanges].sort((x, y) => x.at - y.at);
  const bound = b.debounceMs + b.leaseTtlMs + b.slackMs;

  for (const c of changes) {
    for (const r of rounds) {
      if (r.started_at >= c.at) continue;
      const end = r.ended_at ?? h.now;
      if (end > c.at + b.slackMs) {
        add(
          'stale_round_interrupted',
          `${r.id}:${c.at}`,
          `round ${r.id} started ${iso(r.started_at)} before ${c.holder} led (${iso(c.at)}) and ${r.ended_at === null ? 'is still in flight' : `ended ${r.outcome} only at ${iso(r.ended_at)}`}, ${end - c.at} ms after the change`,
        );
      }
    }
  }

  for (const a of attentionsOf(h.events)) {
    const naming = rounds.filter((r) => names(r, a));
    const served = naming[0]?.started_at ?? null;
    const end = served ?? a.ended ?? h.now;
    const waited = end - a.since - covered(excused(a, rounds, changes, h.outages, h.now), a.since, end);
    if (waited > bound) {
      add(
        'attention_served',
        `${a.session_id}:${a.since}`,
        `session ${a.session_id} waited (${a.trigger} "${a.key}") ${waited} ms with no round in flight and no outage, from ${iso(a.since)} to ${served !== null ? `round ${naming[0].id} at ${iso(served)}` : a.ended !== null ? `its end at ${iso(a.ended)}` : `now (${iso(h.now)})`}; the bound is ${bound} ms`,
      );
    }
    const completed = naming.filter((r) => r.outcome === 'completed');
    if (completed.length > 1) {
      add('single_wake', `${a.session_id}:${a.since}`, `session ${a.session_id}'s ${a.trigger} "${a.key}" since ${iso(a.since)} woke the brain in ${completed.length} completed rounds: ${completed.map((r) => `${r.id} at ${iso(r.started_at)}`).join(', ')}`);
    }
  }

  // A question is answered by what Brainstem records as its answer in the chat (the first message to the session while
  // it is open, by any path; a later one is a message, not an answer); where the chat has no record of the question,
  // every message carrying its answer counts.
  const messages = new Map<string, number>();
  const chatQuestion = new Map<string, number>();
  const chatAnswers = new Map<number, number>();
  for (const e of h.events) {
    const session = sessionOf(e.stream);
    const d = data(e);
    if (session !== null && e.type === 'session.message_dispatched') messages.set(`${session}\n${String(d.text)}`, (messages.get(`${session}\n${String(d.text)}`) ?? 0) + 1);
    if (e.type !== 'chat.message') continue;
    if (d.kind === 'question' && typeof d.session_id === 'string') chatQuestion.set(`${d.session_id}\n${String(d.text)}`, e.seq);
    if (typeof d.answer_to === 'number') chatAnswers.set(d.answer_to, (chatAnswers.get(d.answer_to) ?? 0) + 1);
  }
  for (const e of h.events) {
    const session = sessionOf(e.stream);
    if (session === null || e.type !== 'session.asked_human') continue;
    const question = String(data(e).question);
    const seq = chatQuestion.get(`${session}\n${question}`);
    const n = seq !== undefined ? (chatAnswers.get(seq) ?? 0) : (messages.get(`${session}\n${answerTo(question)}`) ?? 0);
    if (n > 1) add('single_answer', `${session}:${question}`, `session ${session}'s question "${question}" was answered ${n} times`);
  }

  for (const m of h.merges) {
    const outcome = mergeOutcome(h.events, m.session_id);
    const says = outcome === 'pending' ? 'no outcome' : outcome === 'never_asked' ? 'it was never asked' : outcome.merged ? 'merged' : `failed (${outcome.code})`;
    const merged = typeof outcome === 'object' && outcome.merged;
    const git = m.in_git ? 'in the base branch' : 'not in the base branch';
    if (m.half_done) add('merge_consistent', `${m.session_id}:half`, `session ${m.session_id}'s merge was left half done in the checkout (MERGE_HEAD); the journal says ${says}`);
    if (outcome === 'pending') add('merge_consistent', `${m.session_id}:pending`, `session ${m.session_id}'s merge has no outcome in the journal after its owner recovered; its branch is ${git}`);
    else if (merged !== m.in_git) add('merge_consistent', `${m.session_id}:${says}`, `session ${m.session_id}'s merge: the journal says ${says}, but its branch is ${git}`);
    if (m.acknowledged && !(merged && m.in_git)) add('merge_consistent', `${m.session_id}:acknowledged`, `session ${m.session_id}'s merge was answered 200, yet the journal says ${says} and its branch is ${git}`);
  }

  return { checked: [...INVARIANTS], violations: v };
}
