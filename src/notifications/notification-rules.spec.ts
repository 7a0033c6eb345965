import { NOTIFICATION_KINDS } from '../config/notify-config';
import { Notice, NotifierState, RuleSettings, emptyNotifierState, nextWake, onSignal, onTick } from './notification-rules';
import { Signal, WaitingItem } from './notification-triggers';

const T0 = Date.UTC(2025, 0, 6, 12, 0, 0);
const minuteAt = (ms: number) => new Date(ms).getUTCHours() * 60 + new Date(ms).getUTCMinutes();

const settings = (over: Partial<RuleSettings> = {}): RuleSettings => ({ kinds: new Set(NOTIFICATION_KINDS), quiet: null, merge_window_ms: 60_000, digest_after: 5, ...over });

function permission(session: string, n: number, at: number): WaitingItem {
  return { item: `permission:${session}-${n}`, kind: 'permission', session_id: session, target: { kind: 'permission', session_id: session, request_id: `${session}-${n}` }, subject: 'Bash', detail: `cmd ${n}`, at };
}

/** Runs signals at their times, firing the rules' timer (armed after each step, as the service arms it) whenever it is due before the next one. */
function run(signals: Array<{ at: number; signal: Signal; handled?: boolean }>, s: RuleSettings, until: number): Notice[] {
  let state: NotifierState = emptyNotifierState();
  let last = signals[0]?.at ?? until;
  const sent: Notice[] = [];
  const tickUntil = (t: number) => {
    for (;;) {
      const wake = nextWake(state, { now: last, minute: minuteAt(last) }, s);
      if (wake === null || wake > t) return;
      const step = onTick(state, { now: wake, minute: minuteAt(wake) }, s);
      state = step.state;
      sent.push(...step.notices);
      last = wake;
    }
  };
  for (const { at, signal, handled } of signals) {
    tickUntil(at);
    const step = onSignal(state, signal, { now: at, minute: minuteAt(at) }, s, handled ?? false);
    state = step.state;
    sent.push(...step.notices);
    last = at;
  }
  tickUntil(until);
  return sent;
}

const wait = (item: WaitingItem) => ({ at: item.at, signal: { type: 'wait', item } as Signal });

describe('the notification rules (virtual time)', () => {
  it('given five workers parked at one limit, then one notice for them all, updated once at the window end; a re-park and their work go on silently; a resume settles it', () => {
    const parked = (n: number, at: number): WaitingItem => ({ item: `limit:cs_${n}`, kind: 'limit', session_id: `cs_${n}`, target: null, subject: 'usage limit', detail: '2025-01-06T16:10:00.000Z', at });
    const signals = [
      ...[1, 2, 3, 4, 5].map((n) => wait(parked(n, T0 + n * 1000))),
      // A parked session works on (state working): that does not settle its limit.
      { at: T0 + 6000, signal: { type: 'settle_session', session_id: 'cs_1', permissions: false } as Signal },
      // Its resume refused again, an hour later: parked again in the same episode.
      wait(parked(2, T0 + 3_600_000)),
    ];
    const sent = run(signals, settings({ digest_after: 2 }), T0 + 2 * 3_600_000);
    expect(sent.map((n) => [n.key, n.digest, n.items.length])).toEqual([
      ['limit', false, 1],
      ['limit', false, 5],
    ]);
    const resumed = run([...signals.slice(0, 5), ...[1, 2, 3, 4, 5].map((n) => ({ at: T0 + 10_000, signal: { type: 'settle', item: `limit:cs_${n}` } as Signal }))], settings(), T0 + 3_600_000);
    expect(resumed.map((n) => n.items.length)).toEqual([1]);
  });

  it('given 20 triggers from one session in 10 s, then at most 2 notifications: the first at once, one update at the window end', () => {
    const burst = Array.from({ length: 20 }, (_, i) => wait(permission('cs_a', i, T0 + i * 500)));
    const sent = run(burst, settings(), T0 + 10 * 60_000);
    expect(sent.length).toBeLessThanOrEqual(2);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatchObject({ key: 'cs_a', digest: false, at: T0 });
    expect(sent[0].items).toHaveLength(1);
    // The update is the same notification (its key), saying everything that waits
    expect(sent[1]).toMatchObject({ key: 'cs_a', digest: false, at: T0 + 60_000 });
    expect(sent[1].items).toHaveLength(20);
  });

  it('given a burst whose things were all answered before the window ended, then no update is sent', () => {
    const items = [permission('cs_a', 1, T0), permission('cs_a', 2, T0 + 1000)];
    const sent = run([...items.map(wait), ...items.map((i) => ({ at: T0 + 2000, signal: { type: 'settle', item: i.item } as Signal }))], settings(), T0 + 5 * 60_000);
    expect(sent.map((n) => n.at)).toEqual([T0]);
  });

  it('merges per session: two sessions notify apart, each at once', () => {
    const sent = run([wait(permission('cs_a', 1, T0)), wait(permission('cs_b', 1, T0 + 100))], settings(), T0 + 1000);
    expect(sent.map((n) => n.key)).toEqual(['cs_a', 'cs_b']);
  });

  it('does not notify what the brain handles, but does a question the worker put to the person', () => {
    const question: WaitingItem = { item: 'question:cs_a', kind: 'question', session_id: 'cs_a', target: null, subject: null, detail: 'which db?', at: T0 + 1 };
    const sent = run([{ ...wait(permission('cs_a', 1, T0)), handled: true }, { ...wait(question), handled: true }], settings(), T0 + 1000);
    expect(sent.map((n) => n.items.map((i) => i.kind))).toEqual([['question']]);
  });

  it('notifies only the kinds chosen', () => {
    const blocked: WaitingItem = { item: 'blocked:cs_b', kind: 'blocked', session_id: 'cs_b', target: null, subject: null, detail: 'no network', at: T0 };
    const sent = run([wait(permission('cs_a', 1, T0)), wait(blocked)], settings({ kinds: new Set(['blocked']) }), T0 + 1000);
    expect(sent.map((n) => n.key)).toEqual(['cs_b']);
  });

  it('sends one digest instead when more sessions than digest_after wait', () => {
    const signals = ['a', 'b', 'c', 'd'].map((s, i) => wait(permission(`cs_${s}`, 1, T0 + i * 1000)));
    const sent = run(signals, settings({ digest_after: 2 }), T0 + 10_000);
    expect(sent.map((n) => [n.key, n.digest, n.items.length])).toEqual([
      ['cs_a', false, 1],
      ['cs_b', false, 1],
      ['digest', true, 3],
    ]);
    // The fourth arrives within the digest's window: it goes in the digest's update, at the window's end
    const later = run(signals, settings({ digest_after: 2 }), T0 + 5 * 60_000);
    expect(later.slice(3).map((n) => [n.key, n.items.length, n.at])).toEqual([['digest', 4, T0 + 2000 + 60_000]]);
  });

  it('holds everything during quiet hours, then says in one digest what still waits when they end', () => {
    // Quiet 22:00-07:00 (UTC here); things arrive at 23:00 and 02:00, one is answered at 03:00
    const night = Date.UTC(2025, 0, 6, 23, 0, 0);
    const quiet = settings({ quiet: { from: 22 * 60, to: 7 * 60 } });
    const a = permission('cs_a', 1, night);
    const b = permission('cs_b', 1, night + 3 * 3600_000);
    const c = permission('cs_c', 1, night + 3 * 3600_000 + 1);
    const sent = run([wait(a), wait(b), wait(c), { at: night + 4 * 3600_000, signal: { type: 'settle', item: c.item } }], quiet, night + 12 * 3600_000);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ digest: true, at: Date.UTC(2025, 0, 7, 7, 0, 0) });
    expect(sent[0].items.map((i) => i.item)).toEqual([a.item, b.item]);
  });

  it('settles what a session waited on when it works again, and all of it when it exits', () => {
    let state = emptyNotifierState();
    const clock = { now: T0, minute: minuteAt(T0) };
    const question: WaitingItem = { item: 'question:cs_a', kind: 'question', session_id: 'cs_a', target: null, subject: null, detail: '?', at: T0 };
    for (const item of [question, permission('cs_a', 1, T0)]) state = onSignal(state, { type: 'wait', item }, clock, settings(), false).state;
    state = onSignal(state, { type: 'settle_session', session_id: 'cs_a', permissions: false }, clock, settings(), false).state;
    expect([...state.waiting.keys()]).toEqual(['permission:cs_a-1']);
    state = onSignal(state, { type: 'settle_session', session_id: 'cs_a', permissions: true }, clock, settings(), false).state;
    expect(state.waiting.size).toBe(0);
  });
});
