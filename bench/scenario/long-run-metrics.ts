import type { BrainRequest, JournalRecord, Spread } from './scenario-metrics';
import { percentile } from './scenario-metrics';

/** What the brain must still know after a roll-over: the goal, an open question, a pending confirmation. */
export interface MustKnow {
  goal: string;
  /** A worker's question nobody answered. */
  question: string;
  /** A confirmation the person never gave (its id). */
  confirmation_id: string | null;
}

export interface Window {
  /** The rounds, by their order (from 1), this window covers. */
  from: number;
  to: number;
  fresh: Spread;
  cache_read: Spread;
}

export interface LongRunReport {
  rounds: number;
  windows: Window[];
  rollovers: number;
  /** Of the roll-overs, how many kept summaries carry each thing the brain must know. */
  carries: { goal: number; question: number; confirmation: number };
  /** The first kept summary, for the reader. */
  first_summary: string | null;
}

const spread = (xs: readonly number[]): Spread => ({ p50: percentile(xs, 50), p99: percentile(xs, 99), n: xs.length });

/**
 * Whether a long supervision's rounds cost the same at its end as at its start, and what survives its roll-overs:
 * brain tokens per round (fresh: not read from the cache) in `windows` equal stretches of rounds, in the order the
 * brain saw them; and each new conversation Brainstem started for the context budget (brain.conversation_started with
 * reason context_budget), with whether its kept summary names the goal, the open question and the pending confirmation.
 */
export function longRunReport(journal: readonly JournalRecord[], requests: readonly BrainRequest[], must: MustKnow, windows = 10): LongRunReport {
  const order: string[] = [];
  const perRound = new Map<string, { fresh: number; read: number }>();
  for (const q of requests) {
    if (!q.round) continue;
    if (!perRound.has(q.round)) {
      order.push(q.round);
      perRound.set(q.round, { fresh: 0, read: 0 });
    }
    const r = perRound.get(q.round)!;
    r.fresh += q.usage.input_tokens + q.usage.cache_creation_input_tokens;
    r.read += q.usage.cache_read_input_tokens;
  }
  const size = Math.max(1, Math.ceil(order.length / windows));
  const out: Window[] = [];
  for (let i = 0; i < order.length; i += size) {
    const slice = order.slice(i, i + size).map((id) => perRound.get(id)!);
    out.push({ from: i + 1, to: i + slice.length, fresh: spread(slice.map((r) => r.fresh)), cache_read: spread(slice.map((r) => r.read)) });
  }
  const summaries = journal
    .filter((e) => e.type === 'brain.conversation_started' && (e.data as { reason?: string }).reason === 'context_budget')
    .map((e) => String((e.data as { summary?: unknown }).summary ?? ''));
  const count = (has: (s: string) => boolean) => summaries.filter(has).length;
  return {
    rounds: order.length,
    windows: out,
    rollovers: summaries.length,
    carries: {
      goal: count((s) => s.includes(must.goal)),
      question: count((s) => s.includes(must.question)),
      confirmation: must.confirmation_id === null ? 0 : count((s) => s.includes(must.confirmation_id!)),
    },
    first_summary: summaries[0] ?? null,
  };
}
