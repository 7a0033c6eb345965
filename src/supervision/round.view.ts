import { RoundInterruption, RoundOutcome, WakeReason } from './supervision.machine';

export type RoundStatus = 'in_flight' | RoundOutcome;
/** How a round ended: the reason of the signal that aborts its delivery. */
export type RoundEnding = Exclude<RoundStatus, 'in_flight'>;

/** A round as the API, the drivers and the brain see it. */
export interface RoundView {
  id: string;
  turn: number;
  status: RoundStatus;
  started_at: string;
  deadline_at: string;
  ended_at: string | null;
  reasons: WakeReason[];
  prompt: string;
  summary: string | null;
  /** Why delivering the round to the brain failed (status failed), else null. */
  failure: string | null;
  /** Why it was cut off (status interrupted; null for rounds journaled before the reason was), else null. */
  interruption: RoundInterruption | null;
}
