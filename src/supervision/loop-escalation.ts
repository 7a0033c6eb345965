import { SessionDirectory } from './session-directory.port';
import { SupervisionLog, reasonOf } from './supervision-log';
import { SupervisionJournalEvent } from './supervision.decider';
import { WakeReason, wakeReason } from './supervision.machine';
import { LoopTrigger } from './wake-triggers';

/** A session held because its loop persisted: what the user is asked about. */
export interface HeldLoop {
  session_id: string;
  alias: string;
  pattern: string;
  /** Brainstem's words (no worker text). */
  summary: string;
  /** The wake-ups of the brain for the loop before it was held. */
  wakes: number;
}

/** Asks the user what to do with a held session (the main brain's human gate sets it). */
export type LoopHeldListener = (held: HeldLoop) => Promise<unknown>;

/** What the loop escalation needs of supervision. */
export interface LoopHost {
  /** Decides take_loop on supervision's command path (in its queue, on the leader): the event journaled. */
  take(loop: LoopTrigger): Promise<readonly SupervisionJournalEvent[]>;
  wake(reason: WakeReason): void;
}

/**
 * A loop detected in a supervised session, on the node that leads supervision: its wake-ups are journaled (take_loop),
 * so they are counted across restarts and failovers. Up to the session's escalate_after wake-ups for the same loop,
 * each wakes the brain with the loop as its reason; one more, and the session is held (SessionsService.hold, which
 * interrupts its turn) and the user asked through the human gate, which alone can release it.
 */
export class LoopEscalation {
  private listener: LoopHeldListener | null = null;

  constructor(
    private readonly sessions: Pick<SessionDirectory, 'hold'>,
    private readonly host: LoopHost,
    private readonly log: SupervisionLog,
  ) {}

  onHeld(listener: LoopHeldListener): void {
    this.listener = listener;
  }

  async take(loop: LoopTrigger): Promise<void> {
    const [decided] = await this.host.take(loop);
    if (!decided) return;
    const { session_id, alias } = loop.reason;
    if (decided.type === 'supervision.loop_woken') {
      const k = loop.escalate_after;
      const left = k > 0 ? `; wake-up ${decided.data.wakes} of ${k} for this loop before Brainstem holds the session and asks the user` : '';
      this.host.wake(wakeReason({ ...loop.reason, message: `${loop.summary}${left}` }));
      return;
    }
    if (decided.type !== 'supervision.loop_escalated') return;
    const { wakes } = decided.data;
    let heldNow: boolean;
    try {
      heldNow = await this.sessions.hold(session_id, 'loop', `${loop.pattern} after ${wakes} wake-ups of the main brain: ${loop.summary}`, 'brainstem');
    } catch (e) {
      this.log.error(`${alias} (${session_id}) kept looping (${loop.pattern}) after ${wakes} wake-ups, but holding it failed: ${reasonOf(e)}`);
      return;
    }
    // Held already (another pattern of the same loop got there first, or its budget): the user was asked then.
    if (!heldNow) return;
    if (!this.listener) {
      this.log.warn(`${alias} (${session_id}) is held for a loop, and no human gate is there to ask the user: release it with POST /api/v1/coding-sessions/${session_id}/release`);
      return;
    }
    await this.listener({ session_id, alias, pattern: loop.pattern, summary: loop.summary, wakes }).catch((e: unknown) =>
      this.log.error(`${alias} (${session_id}) is held for a loop, but asking the user failed: ${reasonOf(e)}`),
    );
  }
}
