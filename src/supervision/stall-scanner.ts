import { SchedulerLike, Subscription, asyncScheduler } from 'rxjs';
import { SerialQueue } from '../common/serial-queue';
import { SessionDirectory } from './session-directory.port';
import { Stall, WatchdogConfig, scanForStalls, watchdogTicks } from './stall-watchdog';
import { SupervisionLog, reasonOf } from './supervision-log';
import { WakeReason, wakeReason } from './supervision.machine';

/** What the stall scan needs of supervision. */
export interface StallHost {
  /** Whether this node leads supervision that is on: only then do stalls wake anyone. */
  watching(): boolean;
  /** Until when each (session, stall kind) may not fire again. */
  cooldowns(): ReadonlyMap<string, number>;
  /** Journals the stall, and its cooldown with it (the command detect_stall). */
  record(stall: Stall): Promise<unknown>;
  wake(reason: WakeReason): void;
}

export interface StallScannerDeps {
  /** Absent: no watchdog (unit tests that do not exercise it). */
  config: WatchdogConfig | undefined;
  sessions: Pick<SessionDirectory, 'list'>;
  /** Supervision's one queue: a scan decides against a state no command moves meanwhile. */
  queue: SerialQueue;
  now: () => number;
  log: SupervisionLog;
  scheduler?: SchedulerLike;
}

/**
 * The stall watchdog: every interval (after a startup delay) it scans the supervised sessions, and each one waiting too
 * long in a state that needs handling is journaled as a stall and wakes the brain; that (session, kind) then cools down.
 */
export class StallScanner {
  private ticks: Subscription | null = null;

  constructor(
    private readonly deps: StallScannerDeps,
    private readonly host: StallHost,
  ) {}

  start(): void {
    if (!this.deps.config || this.ticks) return;
    this.ticks = watchdogTicks(this.deps.config, this.deps.scheduler ?? asyncScheduler).subscribe(() => {
      this.scan().catch((err: unknown) => this.deps.log.error(`stall watchdog: the scan failed: ${reasonOf(err)}`));
    });
  }

  stop(): void {
    this.ticks?.unsubscribe();
    this.ticks = null;
  }

  /** One scan: the stalls it journaled (each also woke the brain). */
  scan(): Promise<Stall[]> {
    const { config, sessions, queue, now, log } = this.deps;
    return queue.run(async () => {
      if (!config || !this.host.watching()) return [];
      const watched = sessions.list().map((s) => ({ ...s, supervised: s.active && !s.excluded }));
      const recorded: Stall[] = [];
      for (const st of scanForStalls(now(), watched, this.host.cooldowns(), config)) {
        try {
          await this.host.record(st);
        } catch (e) {
          // Not journaled, so no wake-up (and no cooldown): the next scan finds the stall again.
          log.error(`stall watchdog: ${st.alias} (${st.session_id}) has waited ${st.stalled_for_s}s in ${st.kind}, but recording the stall failed: ${reasonOf(e)}`);
          continue;
        }
        recorded.push(st);
        this.host.wake(wakeReason({ session_id: st.session_id, alias: st.alias, trigger: 'stall', state: st.kind, message: `waiting ${st.stalled_for_s}s in ${st.kind}` }));
      }
      return recorded;
    });
  }
}
