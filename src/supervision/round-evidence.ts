import { OutputElsewhere, SessionDirectory, SessionView } from './session-directory.port';
import { sharedWorkTrees, workerEvidence } from './round-prompt';
import { boardOf, freshReasons } from './round-facts';
import { RoundInFlight, WakeReason, WorkerEvidence, WorkerReport, wakeReason } from './supervision.machine';

/**
 * What a round journals of the woken sessions, and what its prompt shows of them. `round.started` is written and synced
 * before anyone hears of the round, so it carries each fact once: a session's alias is in its reasons, a session with
 * nothing to report has no entry (a burst of 1,000 wake-ups carried 1,000 such entries, 40% of its event), and a turn
 * result that is also the message of the session's pending_handling reason is not written twice.
 */

interface Woken {
  alias: string;
  /** The message of the session's first pending_handling reason: the turn result it woke the brain with. */
  turnEnd: string | null;
}

/** The sessions the reasons name, each once, in the order they are first named (system reasons aside): one pass. */
function wokenSessions(reasons: readonly WakeReason[]): Map<string, Woken> {
  const woken = new Map<string, Woken>();
  for (const r of reasons) {
    if (r.session_id === '-') continue;
    let w = woken.get(r.session_id);
    if (!w) woken.set(r.session_id, (w = { alias: r.alias, turnEnd: null }));
    if (w.turnEnd === null && r.trigger === 'pending_handling') w.turnEnd = r.message;
  }
  return woken;
}

/**
 * The most a round waits for the output of woken sessions other nodes run. An owner answers a tail in milliseconds; one
 * that has not within a second is hung or overloaded, and rounds (one at a time) must not wait on it: the round starts
 * saying so, and the brain can read the output later (read_session_output). Sessions run here are read at once.
 */
export const OUTPUT_ELSEWHERE_WAIT_MS = 1000;

const NONE_ELSEWHERE: ReadonlyMap<string, OutputElsewhere> = new Map();

/** The sessions the reasons name (system reasons aside), each once: those whose output may be on another node. */
export function wokenIds(reasons: readonly WakeReason[]): string[] {
  return [...wokenSessions(reasons).keys()];
}

/**
 * What the round journals of the woken sessions, taken as it starts (`find`: a session's view by id; `elsewhere`: what
 * other nodes gave of the output of the sessions they run, asked before: outputTailsElsewhere).
 */
export function takeReports(
  reasons: readonly WakeReason[],
  sessions: Pick<SessionDirectory, 'outputTail'>,
  find: (id: string) => SessionView | undefined,
  elsewhere: ReadonlyMap<string, OutputElsewhere> = NONE_ELSEWHERE,
): Pick<RoundInFlight, 'reports' | 'unseen'> {
  const reports: WorkerReport[] = [];
  const unseen: string[] = [];
  for (const [id, { turnEnd }] of wokenSessions(reasons)) {
    const s = find(id);
    if (!s) {
      unseen.push(id);
      continue;
    }
    const away = elsewhere.get(id);
    const e = workerEvidence(s, (lines) => (away === undefined ? sessions.outputTail(id, lines) : 'lines' in away ? away.lines.slice(-lines) : away));
    if (e.kind === 'nothing') continue;
    // Keys in sorted order, as the journal writes them.
    const said = e.kind === 'turn_result' && e.text === turnEnd;
    reports.push(said ? { kind: e.kind, session_id: id } : { kind: e.kind, session_id: id, text: e.text });
  }
  return { reports, ...(unseen.length ? { unseen } : {}) };
}

/** Each woken session's evidence as the prompt shows it, from the round as journaled (rounds journaled before `reports` carry it whole). */
export function roundEvidence(round: Pick<RoundInFlight, 'reasons' | 'evidence' | 'reports' | 'unseen'>): WorkerEvidence[] | undefined {
  if (!round.reports) return round.evidence;
  const reported = new Map(round.reports.map((r) => [r.session_id, r]));
  const unseen = new Set(round.unseen);
  const evidence: WorkerEvidence[] = [];
  for (const [id, { alias, turnEnd }] of wokenSessions(round.reasons)) {
    if (unseen.has(id)) continue;
    const r = reported.get(id);
    const text = r ? (r.text ?? turnEnd ?? '') : '';
    evidence.push({ alias, kind: r?.kind ?? 'nothing', session_id: id, text });
  }
  return evidence;
}

/**
 * A round to start for these reasons at `at`: its deadline, what the woken sessions reported (`elsewhere`: the output
 * other nodes gave, asked before) and the shared work trees its prompt shows.
 */
export function newRound(
  id: string,
  triggered: WakeReason[],
  at: number,
  timeout_s: number,
  sessions: Pick<SessionDirectory, 'list' | 'outputTail'>,
  taken: RoundTaken = {},
): RoundInFlight {
  const { elsewhere = NONE_ELSEWHERE, since = null, questionSeq = () => null, coveredAt = () => undefined } = taken;
  const all = sessions.list();
  const shared = sharedWorkTrees(all);
  // The woken sessions are found among the views just listed: the directory builds a view for each get, and a burst
  // wakes a thousand while the round starts.
  const byId = new Map<string, SessionView>();
  for (const s of all) byId.set(s.id, s);
  const fresh = freshReasons(triggered, (sid) => byId.get(sid), coveredAt);
  const resolved = fresh.resolved;
  // A question is named by its seq in the chat too, where the user answers it.
  const reasons = fresh.reasons.map((r) => {
    const seq = r.trigger === 'ask_human' || r.trigger === 'pending_decision' ? questionSeq(r.session_id) : null;
    return seq === null ? r : wakeReason({ ...r, chat_seq: seq });
  });
  const { board, more } = boardOf(all, new Set(wokenIds(reasons)));
  return {
    id,
    started_at: at,
    deadline_at: at + timeout_s * 1000,
    reasons,
    ...takeReports(reasons, sessions, (sid) => byId.get(sid), elsewhere),
    ...(resolved.length ? { resolved } : {}),
    board,
    ...(more ? { board_more: more } : {}),
    ...(since ? { since: since.lines, ...(since.more ? { since_more: since.more } : {}), since_round: since.round_id } : {}),
    ...(shared.length ? { shared_work_trees: shared } : {}),
  };
}

/**
 * What a round takes besides the sessions: the output other nodes gave of the sessions they run (asked before), what
 * others did since the round before, and each session's open question's seq in the chat.
 */
export interface RoundTaken {
  elsewhere?: ReadonlyMap<string, OutputElsewhere>;
  since?: SinceRound | null;
  questionSeq?: (sessionId: string) => number | null;
  /** When the round that last named a session started (supervision's coverage): a wait it named is not woken for again. */
  coveredAt?: (sessionId: string) => number | undefined;
}

/** What others did since the round before (round-facts.ts sinceLastRound), and which round that was. */
export interface SinceRound {
  round_id: string;
  lines: string[];
  more: number;
}
