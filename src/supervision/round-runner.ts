import { EMPTY, Observable, SchedulerLike, Subject, Subscription, asyncScheduler, concat, defer, from, ignoreElements, of, race, switchMap, take, tap, timer } from 'rxjs';
import { RoundDriver } from './round-driver.port';
import { RoundEnding, RoundStatus, RoundView } from './round.view';
import { SupervisionLog, reasonOf } from './supervision-log';
import { WakeReason } from './supervision.machine';
import { wakeRounds } from './wake-pipeline';

/** What the runner asks of supervision: each a command on its command path, answered once it is applied. */
export interface RoundCommands {
  /** Starts a round for these reasons: its view, or null when none starts (supervision closed, a round in flight). */
  start(reasons: WakeReason[]): Promise<RoundView | null>;
  complete(id: string, summary: string): Promise<unknown>;
  fail(id: string, reason: string): Promise<unknown>;
  timeOut(id: string): Promise<unknown>;
  /** A round's status now; null once it has left memory. */
  status(id: string): RoundStatus | null;
}

export interface RoundRunnerOptions {
  debounce_ms: number;
  now: () => number;
  /** Where the debounce and the deadlines are timed (virtual time in specs). */
  scheduler?: SchedulerLike;
}

/**
 * The longest a trigger waits for its round, in debounce windows: a session that signals more often than the window
 * (a worker reporting every second) must not hold back the round of everyone waiting.
 */
export const MAX_WAIT_WINDOWS = 3;

/** The longest a round waits for its brain to be ready (a turn that runs on): then it starts, and is delivered when it can be. */
export const READY_WAIT_MS = 5_000;

interface Trigger {
  reason: WakeReason;
  immediate: boolean;
  /** A round in flight this runner did not start (kept at a takeover): it is waited on, not started or delivered. */
  adopt?: RoundView;
}

/** The trigger that carries an adopted round: it names no session. */
const ADOPTED: WakeReason = { session_id: '-', alias: '-', trigger: 'adopted_round', state: null, message: null };

/** A round handed to the driver: its end (which aborts the delivery) and its deadline. */
interface OpenRound {
  ended: Subject<RoundEnding>;
  deadline: Subscription;
}

/**
 * Runs the rounds of the node that supervises: triggers go through the wake pipeline (debounced, one round at a time),
 * each round is started on the command path, handed to the driver, and timed out at its deadline (a timestamp, so a
 * round's timer is armed from the round, whenever the runner takes it). A round ends however its end is folded (the
 * brain's complete_round on any node, the driver, the deadline, a close): `ended` is told, and the next round may start.
 */
export class RoundRunner {
  private readonly triggers = new Subject<Trigger>();
  private pipeline: Subscription | null = null;
  private readonly opened = new Map<string, OpenRound>();
  private readonly scheduler: SchedulerLike;

  constructor(
    private readonly commands: RoundCommands,
    private readonly driver: () => RoundDriver,
    private readonly options: RoundRunnerOptions,
    private readonly log: SupervisionLog,
  ) {
    this.scheduler = options.scheduler ?? asyncScheduler;
  }

  /** Whether rounds run: between start() and stop(). */
  get running(): boolean {
    return this.pipeline !== null;
  }

  /** A reason to wake the brain: merged with the others within the debounce, or at once (`immediate`). Dropped while not running. */
  trigger(reason: WakeReason, immediate = false): void {
    this.triggers.next({ reason, immediate });
  }

  /**
   * Rounds run from here (supervision on, on the node that supervises). `adopt`: the round in flight kept at a
   * takeover, whose brain already has it: the first round, its deadline armed from the round, and no other starts
   * before it ends.
   */
  start(adopt: RoundView | null = null): void {
    if (this.pipeline) return;
    this.pipeline = wakeRounds(this.triggers, (batch) => this.run(batch), {
      debounceMs: this.options.debounce_ms,
      maxWaitMs: MAX_WAIT_WINDOWS * this.options.debounce_ms,
      key: (t) => `${t.reason.session_id}:${t.reason.trigger}`,
      immediate: (t) => t.immediate,
      scheduler: this.scheduler,
    }).subscribe();
    if (adopt) this.triggers.next({ reason: ADOPTED, immediate: true, adopt });
  }

  /**
   * Rounds stop here (supervision closed, the lease lost, the service stopping): pending triggers are dropped, deadlines
   * disarmed, and deliveries aborted; a round still in flight in the journal is the next leader's to resume.
   */
  stop(): void {
    this.pipeline?.unsubscribe();
    this.pipeline = null;
    for (const r of this.opened.values()) {
      r.deadline.unsubscribe();
      r.ended.complete();
    }
    this.opened.clear();
  }

  /** A round's end was folded, whoever journaled it: its deadline is disarmed, its delivery aborted with how it ended. */
  ended(id: string, how: RoundEnding): void {
    const r = this.opened.get(id);
    if (!r) return;
    this.opened.delete(id);
    r.deadline.unsubscribe();
    r.ended.next(how);
    r.ended.complete();
  }

  /** One round: started on the command path, handed to the driver, done when it ends; or an adopted one, waited on. */
  private run(batch: Trigger[]): Observable<unknown> {
    const adopted = batch.find((t) => t.adopt)?.adopt;
    if (adopted) return this.commands.status(adopted.id) === 'in_flight' ? this.open(adopted, false) : EMPTY;
    if (this.pausedFor() !== null) return this.hold(batch);
    const reasons = batch.map((t) => t.reason);
    const started = () =>
      this.commands.start(reasons).catch((e: unknown) => {
        const why = reasons.map((r) => (r.session_id === '-' ? r.trigger : `${r.trigger} from ${r.alias} (${r.session_id})`)).join(', ');
        this.log.error(`a round to wake the brain for ${why} could not start: ${reasonOf(e)}`);
        return null;
      });
    const ready = (): Observable<unknown> => {
      const driver = this.driver();
      return driver.ready ? race(from(driver.ready().catch(() => undefined)), timer(READY_WAIT_MS, this.scheduler)).pipe(take(1)) : of(null);
    };
    let how: RoundEnding | null = null;
    const round$ = defer(ready).pipe(
      switchMap(() => from(started())),
      switchMap((round) => {
        // Ended before it could be handed over (another node's complete_round, a close): nothing to deliver.
        if (!round || this.commands.status(round.id) !== 'in_flight') return EMPTY;
        return this.open(round, true).pipe(tap((ending) => (how = ending)));
      }),
    );
    // The brain parked at its limit during the round (refused by it): its reasons go to the first round after the reset.
    return concat(round$, defer(() => (how === 'failed' && this.pausedFor() !== null ? this.hold(batch) : EMPTY)));
  }

  /** How long the brain takes no round yet (parked at its model's limit), or null. */
  private pausedFor(): number | null {
    const until = this.driver().pausedUntil?.() ?? null;
    return until === null ? null : Math.max(0, until - this.options.now());
  }

  /**
   * A batch the brain cannot take now: its triggers wait again (a newer one of the same key replaces it), and no round
   * starts until the brain goes on; then what waits, this batch and all that came meanwhile, is one round.
   */
  private hold(batch: Trigger[]): Observable<never> {
    for (const t of batch) this.triggers.next({ reason: t.reason, immediate: false });
    const wait = (): Observable<never> => {
      const left = this.pausedFor();
      return left === null ? EMPTY : concat(timer(left, this.scheduler).pipe(ignoreElements()), defer(wait));
    };
    return wait();
  }

  /** A round in flight, timed out at its deadline; handed to the driver unless its brain has it already. */
  private open(round: RoundView, deliver: boolean): Observable<RoundEnding> {
    const ended = new Subject<RoundEnding>();
    const deadline = timer(Math.max(0, Date.parse(round.deadline_at) - this.options.now()), this.scheduler).subscribe(() => {
      this.commands.timeOut(round.id).catch((e: unknown) => this.log.error(`round ${round.id}: its deadline passed, but recording the timeout failed: ${reasonOf(e)}`));
    });
    this.opened.set(round.id, { ended, deadline });
    if (deliver) this.deliver(round, ended);
    return ended;
  }

  /**
   * Hands the round to the driver; a driver that ends the round itself completes it, and a failure ends it as failed,
   * logged. Once the signal is aborted the round has ended otherwise (or rounds stopped here, and the journal keeps it
   * in flight): what the driver answers then is not recorded.
   */
  private deliver(round: RoundView, ended: Observable<RoundEnding>): void {
    const abort = new AbortController();
    // Ended without a status: rounds stopped here, and the journal still has the round in flight.
    let how: RoundEnding = 'interrupted';
    const sub = ended.subscribe({ next: (status) => (how = status), complete: () => abort.abort(how) });
    const driver = this.driver();
    driver
      .deliver(round, abort.signal)
      .then(
        (result) => {
          if (result && !abort.signal.aborted) return this.record(round.id, () => this.commands.complete(round.id, result.summary), `the ${driver.name} brain ended it`);
        },
        (e: unknown) => {
          if (abort.signal.aborted) return;
          const failure = `delivery to the main brain failed (${driver.name}): ${reasonOf(e)}`;
          this.log.warn(`round ${round.id}: ${failure}`);
          return this.record(round.id, () => this.commands.fail(round.id, failure), 'its delivery failed');
        },
      )
      .finally(() => sub.unsubscribe());
  }

  private async record(id: string, end: () => Promise<unknown>, what: string): Promise<void> {
    try {
      await end();
    } catch (e) {
      // Ended meanwhile (complete_round, a timeout, a close): there is nothing left to record.
      if (this.commands.status(id) !== 'in_flight') return;
      this.log.error(`round ${id}: ${what}, but recording its end failed: ${reasonOf(e)}`);
    }
  }
}
