import { HookDecision, HookWaits } from './hook-waits';

/** A wait as a line opens it: its outcome, and the end that lets it go with none. */
function opened(): { outcome: Promise<HookDecision | null>; end: jest.Mock; decide: (d: HookDecision) => void } {
  let settle: (d: HookDecision | null) => void = () => undefined;
  const outcome = new Promise<HookDecision | null>((r) => (settle = r));
  return { outcome, end: jest.fn(() => settle(null)), decide: (d) => settle(d) };
}

describe('the hooks that wait for a decision', () => {
  let n = 0;
  const waits = () => new HookWaits(() => `id${++n}`);

  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('Given a Stop wait, When the brain sends the session a message, Then the hook gets it', async () => {
    const w = waits();
    const o = opened();
    const id = w.open('stop', 'cs_1', o.outcome, o.end, 180);
    o.decide({ kind: 'continue', text: 'go on' });
    await expect(w.outcome(id)).resolves.toEqual({ kind: 'continue', text: 'go on' });
  });

  it('Given a Stop wait, When no decision comes within its bound, Then it ends with none', async () => {
    const w = waits();
    const o = opened();
    const id = w.open('stop', 'cs_1', o.outcome, o.end, 180);
    jest.advanceTimersByTime(179_999);
    expect(o.end).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    await expect(w.outcome(id)).resolves.toBeNull();
  });

  it('Given a Stop wait, When a round that started before it ends, Then it still waits; When the round that took it up ends, Then it ends with none', async () => {
    const w = waits();
    const o = opened();
    w.roundStarted('rd_before', new Set(['cs_2']));
    const id = w.open('stop', 'cs_1', o.outcome, o.end, 180);
    w.roundEnded('rd_before');
    expect(o.end).not.toHaveBeenCalled();
    w.roundStarted('rd_other', new Set(['cs_2']));
    w.roundStarted('rd_mine', new Set(['cs_1', 'cs_2']));
    w.roundEnded('rd_other');
    expect(o.end).not.toHaveBeenCalled();
    w.roundEnded('rd_mine');
    await expect(w.outcome(id)).resolves.toBeNull();
  });

  it("Given waits of two sessions, When one leaves supervision's scope, Then only its waits end; When supervision turns off, Then all do", () => {
    const w = waits();
    const a = opened();
    const b = opened();
    w.open('permission', 'cs_a', a.outcome, a.end, 60);
    w.open('stop', 'cs_b', b.outcome, b.end, 180);
    w.endFor('cs_a');
    expect([a.end.mock.calls.length, b.end.mock.calls.length]).toEqual([1, 0]);
    w.endFor();
    expect(b.end).toHaveBeenCalledTimes(1);
  });

  it('Given a settled wait, Then its decision is still answered for a while, then it is forgotten (not_found)', async () => {
    const w = waits();
    const o = opened();
    const id = w.open('stop', 'cs_1', o.outcome, o.end, 180);
    o.decide({ kind: 'continue', text: 'x' });
    await Promise.resolve();
    await Promise.resolve();
    jest.advanceTimersByTime(29_000);
    await expect(w.outcome(id)).resolves.toEqual({ kind: 'continue', text: 'x' });
    jest.advanceTimersByTime(1_000);
    expect(() => w.outcome(id)).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(() => w.outcome('hw_unknown')).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});
