import {
  EMPTY,
  Observable,
  ObservableInput,
  SchedulerLike,
  Subject,
  asyncScheduler,
  catchError,
  concat,
  defer,
  exhaustMap,
  filter,
  finalize,
  from,
  ignoreElements,
  merge,
  MonoTypeOperatorFunction,
  of,
  SchedulerAction,
  share,
  Subscription,
} from 'rxjs';

export interface WakeOptions<T> {
  /** Window in which a burst of triggers merges into one round. */
  debounceMs: number;
  /**
   * The longest a trigger waits for its round, from the first one pending: triggers that never pause for a whole
   * window (a worker signalling every second) would otherwise hold every round back, theirs and everyone else's.
   * Absent: no bound.
   */
  maxWaitMs?: number;
  /** Triggers with the same key within one round are one reason (the latest wins). */
  key: (trigger: T) => string;
  /** Triggers that start a round without waiting for the window (e.g. /supervise's initial round). */
  immediate?: (trigger: T) => boolean;
  scheduler?: SchedulerLike;
}

/**
 * A debounce whose window is asked for at each value (`wait`; 0 or less: the value passes at once, as a timer of 0
 * would still wait for the next tick), with one timer per burst: when it fires before the latest value's window has
 * passed, it is armed again for the rest. A timer per value (RxJS debounce) cost a burst of 1,000 triggers 1,000
 * timers set and cleared, and their garbage.
 */
function quietFor<T>(wait: () => number, scheduler: SchedulerLike): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((out) => {
      let waiting = false;
      let latest: T;
      /** When the latest value's window ends. */
      let due = 0;
      let armed: Subscription | null = null;
      const emit = () => {
        if (!waiting) return;
        waiting = false;
        out.next(latest);
      };
      function fire(this: SchedulerAction<unknown>): void {
        const left = due - scheduler.now();
        if (waiting && left > 0) return void this.schedule(undefined, left);
        armed = null;
        emit();
      }
      const sub = source.subscribe({
        next: (value) => {
          const w = wait();
          latest = value;
          waiting = true;
          due = scheduler.now() + w;
          if (w > 0) {
            armed ??= scheduler.schedule(fire, w);
            return;
          }
          armed?.unsubscribe();
          armed = null;
          emit();
        },
        error: (e: unknown) => out.error(e),
        // As RxJS debounce: the value waiting is emitted before completing.
        complete: () => {
          armed?.unsubscribe();
          emit();
          out.complete();
        },
      });
      return () => {
        sub.unsubscribe();
        armed?.unsubscribe();
      };
    });
}

/**
 * The wake pipeline: triggers → debounce → single-flight rounds. Emits each round's batch as it starts.
 *
 * Triggers accumulate in a pending set until a round takes them; a debounce merges bursts (cut short at the max
 * wait after the first trigger pending) and `exhaustMap` keeps one round in flight. A flush that arrives while a round runs is dropped by
 * exhaustMap but its triggers stay pending, and the end of the round kicks the next one at once:
 * no trigger is lost. A round that fails still ends, releasing the lock.
 */
export function wakeRounds<T>(
  triggers$: Observable<T>,
  runRound: (batch: T[]) => ObservableInput<unknown>,
  options: WakeOptions<T>,
): Observable<T[]> {
  return defer(() => {
    const pending = new Map<string, T>();
    const kick$ = new Subject<void>();
    const scheduler = options.scheduler ?? asyncScheduler;
    /** When the oldest trigger still pending arrived. */
    let firstAt = 0;
    const collected$ = triggers$.pipe(
      filter((t) => {
        const key = options.key(t);
        if (pending.size === 0) firstAt = scheduler.now();
        pending.delete(key);
        pending.set(key, t);
        return true;
      }),
      share(),
    );
    const immediate = options.immediate ?? (() => false);
    const { debounceMs, maxWaitMs } = options;
    const window = () => (maxWaitMs === undefined ? debounceMs : Math.min(debounceMs, Math.max(0, firstAt + maxWaitMs - scheduler.now())));
    const flush$ = merge(
      collected$.pipe(
        filter((t) => !immediate(t)),
        quietFor(window, scheduler),
      ),
      collected$.pipe(filter(immediate)),
      kick$,
    );
    return flush$.pipe(
      filter(() => pending.size > 0),
      exhaustMap(() => {
        const batch = [...pending.values()];
        pending.clear();
        const round$ = from(defer(() => runRound(batch))).pipe(
          ignoreElements(),
          catchError(() => EMPTY),
          // finalize runs before exhaustMap releases its lock: kick on the scheduler, after the release.
          finalize(() => scheduler.schedule(() => pending.size > 0 && kick$.next())),
        );
        return concat(of(batch), round$);
      }),
    );
  });
}
