import { DomainError } from '../common/domain-error';

/** What a waiting hook answers claude with: go on with this text (Stop), or this permission decision. */
export type HookDecision = { kind: 'continue'; text: string } | { kind: 'permission'; behavior: 'allow' | 'deny'; message: string | null };

/** How long a settled wait is still answered, for a hook whose second request comes just after the decision. */
const SETTLED_KEPT_MS = 30_000;

interface Wait {
  session_id: string;
  kind: 'stop' | 'permission';
  outcome: Promise<HookDecision | null>;
  /** Lets the hook go with no decision (claude goes on as without Brainstem). */
  end: () => void;
  timer: NodeJS.Timeout;
  /** The round that took this Stop up (its reasons named the session, and it started after the wait opened). */
  round: string | null;
  settled: boolean;
}

/**
 * The hooks that wait for a decision (docs/guide/external-sessions.md#continuing-a-stopped-session): a Stop hook waits for
 * the supervision round that its stop wakes, a PermissionRequest hook for the answer to its request. Each wait is bounded
 * (its timer ends it) and ends early when the round ends without a message for the session, when supervision turns off
 * or the session leaves its scope. Waits are named by random ids, given only to the hook that reported.
 */
export class HookWaits {
  private readonly waits = new Map<string, Wait>();

  constructor(private readonly newId: () => string) {}

  get size(): number {
    return this.waits.size;
  }

  /** Registers a wait already opened on the session's line; `end` lets it go (called at the latest after `timeoutS`). */
  open(kind: Wait['kind'], sessionId: string, outcome: Promise<HookDecision | null>, end: () => void, timeoutS: number): string {
    const id = `hw_${this.newId()}`;
    const timer = setTimeout(end, timeoutS * 1000);
    timer.unref();
    const wait: Wait = { session_id: sessionId, kind, outcome, end, timer, round: null, settled: false };
    this.waits.set(id, wait);
    void outcome.then(() => {
      wait.settled = true;
      clearTimeout(timer);
      setTimeout(() => this.waits.delete(id), SETTLED_KEPT_MS).unref();
    });
    return id;
  }

  /** The decision the hook of this wait gets, once there is one (null: none, claude goes on as without Brainstem). */
  outcome(id: string): Promise<HookDecision | null> {
    const wait = this.waits.get(id);
    if (!wait) throw new DomainError('not_found', `no hook wait ${JSON.stringify(id.slice(0, 64))} (a wait is kept ${SETTLED_KEPT_MS / 1000} s after it ends)`);
    return wait.outcome;
  }

  /** A round started: the Stop waits of the sessions it names that no round has taken up yet are now its. */
  roundStarted(roundId: string, sessionIds: ReadonlySet<string>): void {
    for (const w of this.waits.values()) if (!w.settled && w.kind === 'stop' && w.round === null && sessionIds.has(w.session_id)) w.round = roundId;
  }

  /** A round ended: the Stop hooks it took up and sent nothing to go, and claude stops. */
  roundEnded(roundId: string): void {
    for (const w of this.waits.values()) if (!w.settled && w.round === roundId) w.end();
  }

  /** The session left supervision's scope, or supervision turned off (no session id: every wait). */
  endFor(sessionId?: string): void {
    for (const w of this.waits.values()) if (!w.settled && (sessionId === undefined || w.session_id === sessionId)) w.end();
  }
}
