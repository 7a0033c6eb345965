import { RoundView } from './round.view';

/**
 * How a round reaches the main brain. `deliver` resolves with the brain's summary when the driver itself
 * ends the round (command exit, webhook response), or null when the brain ends it through
 * complete_round (stream); it rejects when delivery fails (the brain crashed mid-turn, the webhook failed, the
 * command could not spawn), and the round then ends `failed` with that reason. The signal aborts delivery when the
 * round ends otherwise; its reason is the RoundEnding: `completed` when the brain ended the round itself through
 * complete_round, else `timed_out` or `interrupted` (supervision closed, or the service is stopping).
 */
export interface RoundDriver {
  readonly name: string;
  /**
   * Settles when the brain can read a round now (a hosted brain still finishing the turn of the round before): the
   * round starts then, so its facts are taken as the brain reads them, not while it could not. Absent: at once.
   */
  ready?(): Promise<void>;
  /**
   * Until when the brain takes no round (epoch ms; a hosted brain parked at its model's limit), or null. Rounds wait
   * for it: the runner starts none before, and keeps the reasons of one refused for the first round after.
   */
  pausedUntil?(): number | null;
  deliver(round: RoundView, signal: AbortSignal): Promise<{ summary: string } | null>;
}

/** Rounds are events (SSE and the journal); the brain completes them over REST or MCP. */
export const streamDriver: RoundDriver = {
  name: 'stream',
  deliver: async () => null,
};
