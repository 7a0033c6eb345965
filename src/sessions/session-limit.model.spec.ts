import { decide } from './session.decider';
import { CONTINUE_TEXT, DEFAULT_LIMIT_SETTINGS, LimitHit, resumeSchedule, resumeTime } from './session-limit.model';
import { SessionEvent, SessionInput } from './session.events';
import { SessionSnapshot, createSession, nextSnapshot, stateOf } from './session.machine';
import { restoreSession, storeSession } from './session.snapshot';

const T = 1_000_000;
const S = DEFAULT_LIMIT_SETTINGS;
const input: SessionInput = { id: 'cs_l', alias: 'w3', title: 't', runtime: 'claude-code', profile_id: null, cwd: '/repo', command: null, args: [], env: {}, excluded: false, created_at: 1_000 };

type Given = SessionEvent extends infer E ? (E extends SessionEvent ? Omit<E, 'at'> : never) : never;
const given = (events: Given[]): SessionSnapshot => events.reduce((s, e, i) => nextSnapshot(s, { ...e, at: 2_000 + i } as SessionEvent) ?? s, createSession(input));
const started = { type: 'session.started', pid: 1, pid_start_time: 's', idle: false } as const;
const prompt = { type: 'session.message_dispatched', text: 'build the parser' } as const;
const hit = (over: Partial<LimitHit> = {}): LimitHit => ({ reason: 'usage_limit', resets_at: T + 3_600_000, limit_type: 'five_hour', prompt: null, ...over });
const apply = (s: SessionSnapshot, events: SessionEvent[]): SessionSnapshot => events.reduce((x, e) => nextSnapshot(x, e) ?? x, s);
const eventsOf = (d: ReturnType<typeof decide>): SessionEvent[] => {
  if ('error' in d) throw new Error(d.error.message);
  return d.events as SessionEvent[];
};
const park = (s: SessionSnapshot, limit = hit(), at = T, jitter = 0) => eventsOf(decide({ type: 'report_limit', at, limit, settings: S, jitter }, s));

describe('parking at a usage limit', () => {
  it("Given a working session, When its turn is refused with the runtime's reset, Then it parks until that reset and stays working", () => {
    const s = given([started, prompt]);
    const events = park(s);
    expect(events).toEqual([{ type: 'session.parked', at: T, reason: 'usage_limit', resumes_at: T + 3_600_000, source: 'runtime', limit_type: 'five_hour', attempt: 1, prompt: null }]);
    const after = apply(s, events);
    expect(stateOf(after)).toBe('working');
    expect(after.context.parked).toMatchObject({ resumes_at: T + 3_600_000, since: T, attempt: 1 });
  });

  it('Given no reset named, When refused three times in a row, Then the backoff doubles from 60 s; a turn that ends normally starts it again', () => {
    let s = given([started, prompt]);
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      const [e] = park(s, hit({ resets_at: null }), T);
      waits.push((e as { resumes_at: number }).resumes_at - T);
      s = apply(s, [e, ...eventsOf(decide({ type: 'resume_parked', at: T, by: 'timer', worker: 'ready' }, apply(s, [e])))]);
    }
    expect(waits).toEqual([60_000, 120_000, 240_000]);
    s = apply(s, [{ type: 'session.turn_ended', at: T, result: 'done' }]);
    expect((park(s, hit({ resets_at: null }))[0] as { attempt: number }).attempt).toBe(1);
  });

  it('Given many refusals in a row, When backed off, Then the wait is capped at 30 min, and the jitter adds at most a fifth', () => {
    expect(resumeTime(T, { resets_at: null }, 20, S, 0.99).resumes_at - T).toBe(30 * 60_000);
    expect(resumeTime(T, { resets_at: null }, 1, S, 0.5).resumes_at - T).toBe(66_000);
  });

  it('Given a reset in the past or two days away, When parked, Then it is clamped (a second, or 24 h) and the fact says so with the reset named', () => {
    const s = given([started, prompt]);
    expect(park(s, hit({ resets_at: T - 5_000 }))[0]).toMatchObject({ resumes_at: T + 1000, clamped: 'past', reported_resets_at: T - 5_000 });
    expect(park(s, hit({ resets_at: T + 48 * 3_600_000 }))[0]).toMatchObject({ resumes_at: T + 24 * 3_600_000, clamped: 'far', reported_resets_at: T + 48 * 3_600_000 });
  });

  it('Given a parked session, When its timer resumes it, Then it is unparked and sent the "continue", or the prompt the model never saw', () => {
    const s = apply(given([started, prompt]), park(given([started, prompt])));
    expect(eventsOf(decide({ type: 'resume_parked', at: T, by: 'timer', worker: 'ready' }, s))).toEqual([
      { type: 'session.unparked', at: T, by: 'timer' },
      { type: 'session.message_dispatched', at: T, text: CONTINUE_TEXT },
    ]);
    const unseen = apply(given([started, prompt]), park(given([started, prompt]), hit({ prompt: 'build the parser' })));
    expect(eventsOf(decide({ type: 'resume_parked', at: T, by: 'user', worker: 'ready' }, unseen))[1]).toMatchObject({ text: 'build the parser' });
  });

  it('Given a parked session that is held, When its timer fires, Then nothing is decided; When the user resumes it, Then it is refused naming the hold', () => {
    const s = apply(given([started, prompt]), [...park(given([started, prompt])), { type: 'session.held', at: T, reason: 'budget', detail: 'its budget' }]);
    expect(eventsOf(decide({ type: 'resume_parked', at: T, by: 'timer', worker: 'ready' }, s))).toEqual([]);
    expect(decide({ type: 'resume_parked', at: T, by: 'user', worker: 'ready' }, s)).toMatchObject({ error: { code: 'session_held' } });
  });

  it('Given a session not parked, When the user resumes or keeps it, Then 409 session_not_parked; the timer decides nothing', () => {
    const s = given([started, prompt]);
    expect(decide({ type: 'resume_parked', at: T, by: 'user', worker: 'ready' }, s)).toMatchObject({ error: { code: 'session_not_parked' } });
    expect(decide({ type: 'keep_parked', at: T }, s)).toMatchObject({ error: { code: 'session_not_parked' } });
    expect(eventsOf(decide({ type: 'resume_parked', at: T, by: 'timer', worker: 'ready' }, s))).toEqual([]);
  });

  it('Given a parked session, When kept parked, Then it has no time to resume at, and keeping it again decides nothing', () => {
    const s = apply(given([started, prompt]), park(given([started, prompt])));
    const kept = eventsOf(decide({ type: 'keep_parked', at: T + 5 }, s));
    expect(kept).toEqual([expect.objectContaining({ type: 'session.parked', resumes_at: null, source: 'user' })]);
    const after = apply(s, kept);
    expect(after.context.parked).toMatchObject({ resumes_at: null, since: T });
    expect(eventsOf(decide({ type: 'keep_parked', at: T + 6 }, after))).toEqual([]);
  });

  it("Given a parked session, When the user's message reaches it, Then that message is its resume", () => {
    const s = apply(given([started, prompt]), park(given([started, prompt])));
    const sent = eventsOf(decide({ type: 'dispatch_message', at: T, text: 'go on with the lexer', worker: 'ready' }, s));
    expect(apply(s, sent).context.parked).toBeNull();
  });

  it('Given a parked claude session, When the service restarts and resumes its runtime, Then it is still parked and working (not waiting for an instruction)', () => {
    const s = apply(given([started, prompt]), park(given([started, prompt])));
    const back = restoreSession(storeSession(s));
    const recovered = apply(back, [{ type: 'session.recovered', at: T, attachment: 'attached', pid: 2, pid_start_time: 'x', resumed: true }]);
    expect(stateOf(recovered)).toBe('working');
    expect(recovered.context.parked).toMatchObject({ resumes_at: T + 3_600_000 });
  });

  it('Given a parked session, When it exits, Then it is parked no more', () => {
    const s = apply(given([started, prompt]), park(given([started, prompt])));
    expect(apply(s, [{ type: 'session.exited', at: T, code: 0, signal: null, reason: 'exited' }]).context.parked).toBeNull();
  });
});

describe('the resume schedule', () => {
  const entry = (id: string, resumes_at: number, key = 'claude|p|usage_limit|five_hour') => ({ id, key, resumes_at, since: 0 });

  it('Given ten sessions parked on one limit, When scheduled 3 at a time 20 s apart, Then they go in four batches', () => {
    const ids = Array.from({ length: 10 }, (_, i) => `cs_${i}`);
    const at = resumeSchedule(ids.map((id) => entry(id, T)), { resume_batch: 3, resume_stagger_ms: 20_000 });
    expect(ids.map((id) => at.get(id)! - T)).toEqual([0, 0, 0, 20_000, 20_000, 20_000, 40_000, 40_000, 40_000, 60_000]);
  });

  it('Given two limits, When scheduled, Then each is staggered on its own', () => {
    const at = resumeSchedule([entry('a', T), entry('b', T), entry('c', T, 'codex|p|rate_limit|')], { resume_batch: 1, resume_stagger_ms: 5_000 });
    expect([at.get('a')! - T, at.get('b')! - T, at.get('c')! - T]).toEqual([0, 5_000, 0]);
  });

  it('Given a batch already resumed, When the rest are scheduled again, Then they still wait their stagger after it', () => {
    const key = 'claude|p|usage_limit|five_hour';
    const at = resumeSchedule([entry('d', T)], { resume_batch: 3, resume_stagger_ms: 20_000 }, new Map([[key, [T, T, T]]]));
    expect(at.get('d')! - T).toBe(20_000);
  });

  it('Given a later reset, When scheduled, Then no session goes before its own reset', () => {
    const at = resumeSchedule([entry('a', T), entry('b', T + 90_000)], { resume_batch: 1, resume_stagger_ms: 20_000 });
    expect([at.get('a')! - T, at.get('b')! - T]).toEqual([0, 90_000]);
  });
});
