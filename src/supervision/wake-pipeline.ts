import {
  EMPTY,
  Observable,
  ObservableInput,
  SchedulerLike,
  Subject,
  asyncScheduler,
  catchError,
  concat,
  debounce,
  defer,
  exhaustMap,
  filter,
  finalize,
  from,
  ignoreElements,
  merge,
  of,
  share,
  timer,
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
        // Past the max wait, a trigger flushes at once (a timer of 0 would still wait for the next tick).
        debounce(() => {
          const wait = window();
          return wait > 0 ? timer(wait, scheduler) : of(0);
        }),
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
