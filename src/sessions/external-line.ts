import { PermissionDecision } from './session.events';
import { ProcessRunner } from './runtimes/process-runner';
import { DETACHED_POLL_MS } from './runtimes/worker-handles';
import { WorkerHandle } from './runtimes/runtime.port';

/** A permission answer as it goes back to claude through the hook that waits for it. */
export interface HookAnswer {
  decision: PermissionDecision;
  reason: string | null;
}

/**
 * The service's hold on an external session's claude (docs/guide/external-sessions.md): Brainstem did not start that
 * process and never signals it, and it reaches it only through the hooks that wait for an answer. A Stop hook that
 * waits takes a message (the continuation claude goes on with); a PermissionRequest hook that waits takes the answer
 * to its request. The process is watched by its pid and start time, where known: `gone` is called once it has ended.
 */
export class ExternalLine implements WorkerHandle {
  readonly attachment = 'attached' as const;
  private stopWait: ((text: string | null) => void) | null = null;
  private readonly permissionWaits = new Map<string, (answer: HookAnswer | null) => void>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly pid: number | null,
    readonly startTime: string | null,
    runner: ProcessRunner,
    gone: () => void,
    pollMs = DETACHED_POLL_MS,
  ) {
    if (pid === null) return;
    this.timer = setInterval(() => {
      if (runner.isAlive(pid, startTime)) return;
      this.release();
      gone();
    }, pollMs);
    this.timer.unref();
  }

  /** A Stop hook waits: a message now is what claude goes on with. */
  canReceive(): boolean {
    return this.stopWait !== null;
  }

  send(text: string): void {
    this.answerStop(text);
  }

  resolvePermission(requestId: string, decision: PermissionDecision, reason: string | null): void {
    const answer = this.permissionWaits.get(requestId);
    this.permissionWaits.delete(requestId);
    answer?.({ decision, reason });
  }

  /** Never: the process is the user's (its group may be their terminal's). */
  signal(): boolean {
    return false;
  }

  /** Stops watching the process and lets every waiting hook go with no answer (claude then goes on as without Brainstem). */
  release(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.answerStop(null);
    for (const requestId of [...this.permissionWaits.keys()]) this.endPermissionWait(requestId);
  }

  /** Whether a hook waits for the answer to this permission request. */
  awaits(requestId: string): boolean {
    return this.permissionWaits.has(requestId);
  }

  /**
   * A Stop hook's wait: the message to continue with, or null; `end` lets this wait (and no later one) go with none,
   * and claude stops. A newer wait lets an older one go with none.
   */
  waitForMessage(): { outcome: Promise<string | null>; end: () => void } {
    this.answerStop(null);
    let mine: ((text: string | null) => void) | null = null;
    const outcome = new Promise<string | null>((resolve) => (this.stopWait = mine = resolve));
    return { outcome, end: () => this.stopWait === mine && this.answerStop(null) };
  }

  /** A PermissionRequest hook's wait for the answer to its request, or null; `end` lets it go with none (claude asks itself). */
  waitForAnswer(requestId: string): { outcome: Promise<HookAnswer | null>; end: () => void } {
    this.endPermissionWait(requestId);
    const outcome = new Promise<HookAnswer | null>((resolve) => this.permissionWaits.set(requestId, resolve));
    return { outcome, end: () => this.endPermissionWait(requestId) };
  }

  private endPermissionWait(requestId: string): void {
    const answer = this.permissionWaits.get(requestId);
    this.permissionWaits.delete(requestId);
    answer?.(null);
  }

  private answerStop(text: string | null): void {
    const answer = this.stopWait;
    this.stopWait = null;
    answer?.(text);
  }
}
