import { StringDecoder } from 'node:string_decoder';
import { SessionLog } from './session-log';
import { SessionContext, SessionSnapshot, stateOf } from './session.machine';
import { SessionState } from './session.events';
import { WorkerHandle } from './runtimes/runtime.port';

/**
 * One session: its machine snapshot, its stream version, its worker, and a mailbox that runs one
 * thing at a time, so every decision sees the state the previous one journaled.
 */
export class SessionActor {
  handle: WorkerHandle | null = null;
  log: SessionLog | null = null;
  /** The worker's output bytes as text for the live tails: a character split across two chunks comes out whole. */
  readonly outputText = new StringDecoder('utf8');
  killTimer: NodeJS.Timeout | null = null;
  private mailbox: Promise<unknown> = Promise.resolve();
  private exitWaiters: (() => void)[] = [];
  private watchers: (() => void)[] = [];

  constructor(
    public snapshot: SessionSnapshot,
    /** The version of stream session-<id> this snapshot includes. */
    public version: number,
  ) {}

  get id(): string {
    return this.snapshot.context.id;
  }

  get context(): SessionContext {
    return this.snapshot.context;
  }

  get state(): SessionState {
    return stateOf(this.snapshot);
  }

  get live(): boolean {
    return this.state !== 'exited';
  }

  /** Runs fn after everything queued before it. */
  run<T>(fn: () => T | Promise<T>): Promise<T> {
    const result = this.mailbox.then(fn);
    this.mailbox = result.catch(() => undefined);
    return result;
  }

  /** Resolves once the session is exited (at once if it already is). */
  whenExited(): Promise<void> {
    if (!this.live) return Promise.resolve();
    return new Promise((resolve) => this.exitWaiters.push(resolve));
  }

  /**
   * Resolves true once `test` holds of the session (judged now, then as each next state is adopted: another node's
   * events included), or false after timeoutMs or once `gone` aborts.
   */
  until(test: (actor: SessionActor) => boolean, timeoutMs: number, gone?: AbortSignal): Promise<boolean> {
    if (test(this)) return Promise.resolve(true);
    if (gone?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const check = (): void => {
        if (!test(this)) return;
        finish(true);
      };
      const abandon = (): void => finish(false);
      const timer = setTimeout(abandon, timeoutMs);
      const finish = (held: boolean): void => {
        clearTimeout(timer);
        gone?.removeEventListener('abort', abandon);
        this.watchers = this.watchers.filter((w) => w !== check);
        resolve(held);
      };
      gone?.addEventListener('abort', abandon);
      this.watchers.push(check);
    });
  }

  adopt(next: SessionSnapshot, version: number): void {
    this.snapshot = next;
    this.version = version;
    if (!this.live) {
      for (const w of this.exitWaiters.splice(0)) w();
    }
    for (const w of [...this.watchers]) w();
  }
}
