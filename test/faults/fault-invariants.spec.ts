import { Bounds, FaultHistory, JournalRecord, Write, answerTo, attentionsOf, checkInvariants, roundsOf } from './fault-invariants';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const BOUNDS: Bounds = { debounceMs: 200, leaseTtlMs: 2000, slackMs: 2000 };

/** A journal written by hand: each event gets the next seq and a hash of its own. */
function journal() {
  const events: JournalRecord[] = [];
  const add = (stream: string, type: string, atMs: number, data: Record<string, unknown>) => {
    events.push({ seq: events.length + 1, stream, type, at: iso(atMs), data, hash: `h${events.length + 1}` });
    return events[events.length - 1];
  };
  return {
    events,
    asked: (session: string, at: number, question: string) => add(`session-${session}`, 'session.asked_human', at, { at, question }),
    turnEnded: (session: string, at: number, result: string) => add(`session-${session}`, 'session.turn_ended', at, { at, result }),
    message: (session: string, at: number, text: string) => add(`session-${session}`, 'session.message_dispatched', at, { at, text }),
    chat: (at: number, d: Record<string, unknown>) => add('chat', 'chat.message', at, d),
    started: (id: string, at: number, reasons: Array<{ session: string; since: number; trigger?: string }>) =>
      add('supervision', 'round.started', at, {
        round: { id, started_at: at, deadline_at: at + 60_000, reasons: reasons.map((r) => ({ session_id: r.session, trigger: r.trigger ?? 'ask_human', since: iso(r.since) })) },
      }),
    ended: (type: 'round.completed' | 'round.interrupted' | 'round.timed_out', id: string, at: number) => add('supervision', type, at, { round_id: id }),
  };
}

const history = (events: JournalRecord[], over: Partial<FaultHistory> = {}): FaultHistory => ({
  verify: { ok: true },
  events,
  acknowledged: [],
  refused: [],
  seen: new Map(),
  leaderChanges: [],
  outages: [],
  fullDiskAnswers: [],
  merges: [],
  now: T0 + 60_000,
  ...over,
});

const violated = (h: FaultHistory) => checkInvariants(h, BOUNDS).violations.map((v) => v.invariant);

/** A question asked, woken at once, answered and its round completed: nothing to say. */
function cleanRun() {
  const j = journal();
  j.asked('s1', T0, 'q-1');
  j.started('r1', T0 + 300, [{ session: 's1', since: T0 }]);
  j.message('s1', T0 + 400, answerTo('q-1'));
  j.ended('round.completed', 'r1', T0 + 450);
  const acknowledged: Write[] = [
    { kind: 'signal', session_id: 's1', event_type: 'session.asked_human', key: 'q-1' },
    { kind: 'answer', session_id: 's1', key: 'q-1' },
    { kind: 'completion', round_id: 'r1' },
  ];
  return { j, acknowledged };
}

describe('the fault campaign invariants', () => {
  it('given a question woken at once, answered once and its round completed, when checked, then every invariant is checked and none is violated', () => {
    const { j, acknowledged } = cleanRun();
    const result = checkInvariants(history(j.events, { acknowledged, seen: new Map([[1, 'h1']]) }), BOUNDS);
    expect(result.violations).toEqual([]);
    expect(result.checked).toHaveLength(10);
  });

  it('given the journal\'s audit failed, when checked, then chain_verifies is violated with the first bad seq', () => {
    const { j } = cleanRun();
    const [v] = checkInvariants(history(j.events, { verify: { ok: false, first_bad_seq: 3, error: 'hash chain broken' } }), BOUNDS).violations;
    expect(v).toMatchObject({ invariant: 'chain_verifies', key: 'chain_verifies:3' });
    expect(v.detail).toContain('hash chain broken');
  });

  it('given an event read at an earlier check that is now gone or different, when checked, then history_unchanged is violated for each', () => {
    const { j } = cleanRun();
    const h = history(j.events.slice(0, 3), { seen: new Map([[2, 'h2'], [3, 'other'], [4, 'h4']]) });
    expect(checkInvariants(h, BOUNDS).violations.map((v) => v.key)).toEqual(['history_unchanged:changed:3', 'history_unchanged:lost:4']);
  });

  it('given a seq gap, when checked, then history_unchanged names the missing seq', () => {
    const { j } = cleanRun();
    const h = history([j.events[0], j.events[2], j.events[3]]);
    expect(checkInvariants(h, BOUNDS).violations.map((v) => v.key)).toContain('history_unchanged:gap:2');
  });

  it('given an acknowledged signal, answer and completion missing from the journal, when checked, then acknowledged_kept is violated for each', () => {
    const { acknowledged } = cleanRun();
    const j = journal();
    j.asked('s1', T0, 'q-other');
    expect(checkInvariants(history(j.events, { acknowledged }), BOUNDS).violations.filter((v) => v.invariant === 'acknowledged_kept').map((v) => v.key)).toEqual([
      'acknowledged_kept:signal:s1:session.asked_human:q-1',
      'acknowledged_kept:answer:s1:message:q-1',
      'acknowledged_kept:completion:r1',
    ]);
  });

  it('given an acknowledged signal journaled twice, when checked, then acknowledged_kept says so', () => {
    const { j, acknowledged } = cleanRun();
    j.asked('s1', T0 + 500, 'q-1');
    j.started('r2', T0 + 800, [{ session: 's1', since: T0 + 500 }]);
    expect(violated(history(j.events, { acknowledged }))).toEqual(['acknowledged_kept']);
  });

  it('given a signal refused while the disk was full that is in the journal all the same, when checked, then refused_absent is violated', () => {
    const { j } = cleanRun();
    const refused = [{ write: { kind: 'signal', session_id: 's1', event_type: 'session.asked_human', key: 'q-1' } as Write, status: 503, code: 'journal_unavailable' }];
    const [v] = checkInvariants(history(j.events, { refused }), BOUNDS).violations;
    expect(v.invariant).toBe('refused_absent');
    expect(v.detail).toContain('503 journal_unavailable');
  });

  it('given writes answered 500 or not at all while the disk was full, when checked, then full_disk_refused_clearly counts each answer; a 503 with its code and a 2xx are fine', () => {
    const fullDiskAnswers = [
      { status: 503, code: 'journal_unavailable' },
      { status: 201, code: null },
      { status: 500, code: 'internal_error' },
      { status: 500, code: 'internal_error' },
      { status: 0, code: null },
    ];
    const found = checkInvariants(history([], { fullDiskAnswers }), BOUNDS).violations;
    expect(found.map((v) => [v.key, v.detail.split(' ')[0]])).toEqual([
      ['full_disk_refused_clearly:500 internal_error', '2'],
      ['full_disk_refused_clearly:no answer', '1'],
    ]);
  });

  it('given a question no round named for longer than debounce + TTL + 2 s, when checked, then attention_served is violated; within the bound, or behind a round in flight, it is not', () => {
    const j = journal();
    j.asked('s1', T0, 'q-ok');
    j.started('r1', T0 + 4200, [{ session: 's1', since: T0 }]);
    // s2 waits behind r1 while it is in flight: its wait begins when r1 ends.
    j.asked('s2', T0 + 4250, 'q-behind');
    j.ended('round.completed', 'r1', T0 + 4300);
    j.started('r2', T0 + 4300 + 4200, [{ session: 's2', since: T0 + 4250 }]);
    j.ended('round.completed', 'r2', T0 + 8600);
    j.asked('s3', T0 + 9000, 'q-late');
    j.started('r3', T0 + 9000 + 4201, [{ session: 's3', since: T0 + 9000 }]);
    j.ended('round.completed', 'r3', T0 + 13_300);
    const found = checkInvariants(history(j.events), BOUNDS).violations;
    expect(found.map((v) => v.key)).toEqual([`attention_served:s3:${T0 + 9000}`]);
    expect(found[0].detail).toContain('4201 ms with no round in flight');
  });

  it('given a question that came as a round was starting without it, when that round ran long, then the wait is counted from its end', () => {
    const j = journal();
    j.asked('s1', T0, 'q-1');
    j.started('r1', T0 + 40, [{ session: 's2', since: T0 - 100 }]);
    j.ended('round.completed', 'r1', T0 + 4600);
    j.started('r2', T0 + 4620, [{ session: 's1', since: T0 }]);
    expect(violated(history(j.events))).toEqual([]);
    // Were r1's span not counted out, s1 would have waited 4620 ms.
    const k = journal();
    k.asked('s1', T0, 'q-1');
    k.started('r2', T0 + 4620, [{ session: 's1', since: T0 }]);
    expect(violated(history(k.events))).toEqual(['attention_served']);
  });

  it('given a question that still waits with no round at the check, when checked past the bound, then attention_served says it waits until now', () => {
    const j = journal();
    j.asked('s1', T0, 'q-1');
    const [v] = checkInvariants(history(j.events, { now: T0 + 5000 }), BOUNDS).violations;
    expect(v.invariant).toBe('attention_served');
    expect(v.detail).toContain('now');
    expect(violated(history(j.events, { now: T0 + 4000 }))).toEqual([]);
  });

  it('given a question that waited while the journal was down, when checked, then the outage does not count against the wait', () => {
    const j = journal();
    j.asked('s1', T0, 'q-1');
    j.started('r1', T0 + 9000, [{ session: 's1', since: T0 }]);
    expect(violated(history(j.events))).toEqual(['attention_served']);
    expect(violated(history(j.events, { outages: [{ from: T0 + 1000, to: T0 + 7000, what: 'postgres restart' }] }))).toEqual([]);
  });

  it('given a round of the old leader still in flight after the lease moved, when checked, then stale_round_interrupted is violated and the wait is counted from the change', () => {
    const j = journal();
    j.asked('s1', T0, 'q-1');
    j.started('r1', T0 + 300, [{ session: 's1', since: T0 }]);
    j.asked('s2', T0 + 1000, 'q-2');
    // The leader died at T0 + 500; b took the lease at T0 + 2500; r1 ran into its timeout instead of being interrupted.
    j.ended('round.timed_out', 'r1', T0 + 30_300);
    j.started('r2', T0 + 30_500, [{ session: 's2', since: T0 + 1000 }]);
    const leaderChanges = [{ at: T0 + 2500, holder: 'b' }];
    const found = checkInvariants(history(j.events, { leaderChanges }), BOUNDS).violations;
    expect(found.map((v) => v.key)).toEqual([`stale_round_interrupted:r1:${T0 + 2500}`, `attention_served:s2:${T0 + 1000}`]);
    expect(found[0].detail).toContain('ended timed_out');
  });

  it('given the old leader\'s round interrupted as the new one took over, when checked, then the wait behind it is excused until then', () => {
    const j = journal();
    j.asked('s1', T0, 'q-1');
    j.started('r1', T0 + 300, [{ session: 's1', since: T0 }]);
    j.asked('s2', T0 + 1000, 'q-2');
    j.ended('round.interrupted', 'r1', T0 + 2600);
    j.started('r2', T0 + 2900, [{ session: 's1', since: T0 }, { session: 's2', since: T0 + 1000 }]);
    j.ended('round.completed', 'r2', T0 + 3000);
    expect(violated(history(j.events, { leaderChanges: [{ at: T0 + 2500, holder: 'b' }] }))).toEqual([]);
  });

  it('given one question named by two rounds that both completed, when checked, then single_wake is violated; after an interrupted round it is not', () => {
    const j = journal();
    j.asked('s1', T0, 'q-1');
    j.started('r1', T0 + 300, [{ session: 's1', since: T0 }]);
    j.ended('round.completed', 'r1', T0 + 400);
    j.started('r2', T0 + 5000, [{ session: 's1', since: T0 }]);
    j.ended('round.completed', 'r2', T0 + 5100);
    const [v] = checkInvariants(history(j.events), BOUNDS).violations;
    expect(v).toMatchObject({ invariant: 'single_wake', key: `single_wake:s1:${T0}` });
    expect(v.detail).toContain('r1');
    expect(v.detail).toContain('r2');

    const k = journal();
    k.asked('s1', T0, 'q-1');
    k.started('r1', T0 + 300, [{ session: 's1', since: T0 }]);
    k.ended('round.interrupted', 'r1', T0 + 400);
    k.started('r2', T0 + 700, [{ session: 's1', since: T0 }]);
    k.ended('round.completed', 'r2', T0 + 800);
    expect(violated(history(k.events))).toEqual([]);
  });

  it('given a question answered twice, when checked, then single_answer is violated', () => {
    const { j } = cleanRun();
    j.message('s1', T0 + 700, answerTo('q-1'));
    expect(violated(history(j.events))).toEqual(['single_answer']);
  });

  it('given a question the chat records, when it records two answers, then single_answer is violated; one answer and a later message are not', () => {
    const { j } = cleanRun();
    const question = j.chat(T0 + 10, { role: 'worker', kind: 'question', text: 'q-1', session_id: 's1' });
    const answer = { role: 'user', kind: 'message', text: answerTo('q-1'), session_id: 's1', answer_to: question.seq };
    j.chat(T0 + 400, answer);
    j.message('s1', T0 + 700, answerTo('q-1'));
    expect(violated(history(j.events))).toEqual([]);
    j.chat(T0 + 800, answer);
    expect(violated(history(j.events))).toEqual(['single_answer']);
  });

  it('given merges cut off by a kill, when checked, then merge_consistent holds only where the journal and git agree, and a 200 means merged in both', () => {
    const j = journal();
    const merge = (session: string, outcome: 'merged' | 'failed' | 'none') => {
      j.events.push({ seq: j.events.length + 1, stream: `session-${session}`, type: 'session.worktree_op_requested', at: iso(T0), data: { at: T0, op: 'merge', op_id: `op-${session}` }, hash: 'x' });
      if (outcome === 'merged') j.events.push({ seq: j.events.length + 1, stream: `session-${session}`, type: 'session.worktree_merged', at: iso(T0), data: { at: T0, op_id: `op-${session}` }, hash: 'x' });
      if (outcome === 'failed') j.events.push({ seq: j.events.length + 1, stream: `session-${session}`, type: 'session.worktree_op_failed', at: iso(T0), data: { at: T0, op_id: `op-${session}`, code: 'worktree_op_interrupted' }, hash: 'x' });
    };
    merge('ok', 'merged');
    merge('cut', 'failed');
    merge('lied', 'failed');
    merge('lost', 'none');
    // 'early' was cut off before its request was journaled: nothing to agree on but that git has not merged it.
    const merges = [
      { session_id: 'early', acknowledged: false, in_git: false, half_done: false },
      { session_id: 'early-but-merged', acknowledged: false, in_git: true, half_done: false },
      { session_id: 'ok', acknowledged: true, in_git: true, half_done: false },
      { session_id: 'cut', acknowledged: false, in_git: false, half_done: false },
      { session_id: 'lied', acknowledged: false, in_git: true, half_done: true },
      { session_id: 'lost', acknowledged: true, in_git: true, half_done: false },
    ];
    const found = checkInvariants(history(j.events, { merges }), BOUNDS).violations.filter((v) => v.invariant === 'merge_consistent');
    expect(found.map((v) => v.key)).toEqual([
      'merge_consistent:early-but-merged:it was never asked',
      'merge_consistent:lied:half',
      'merge_consistent:lied:failed (worktree_op_interrupted)',
      'merge_consistent:lost:pending',
      'merge_consistent:lost:acknowledged',
    ]);
    expect(found[2].detail).toBe("session lied's merge: the journal says failed (worktree_op_interrupted), but its branch is in the base branch");
  });

  it('given a journal, when its waits and rounds are read, then each wait ends at the next change of its session and each round at its end event', () => {
    const j = journal();
    j.turnEnded('s1', T0, 'r-1');
    j.asked('s1', T0 + 100, 'q-1');
    j.message('s1', T0 + 200, answerTo('q-1'));
    j.started('r1', T0 + 300, [{ session: 's1', since: T0 + 100 }]);
    j.ended('round.interrupted', 'r1', T0 + 400);
    expect(attentionsOf(j.events)).toEqual([
      { session_id: 's1', trigger: 'pending_handling', key: 'r-1', since: T0, ended: T0 + 100 },
      { session_id: 's1', trigger: 'ask_human', key: 'q-1', since: T0 + 100, ended: T0 + 200 },
    ]);
    expect(roundsOf(j.events)).toMatchObject([{ id: 'r1', started_at: T0 + 300, outcome: 'interrupted', ended_at: T0 + 400 }]);
  });
});
