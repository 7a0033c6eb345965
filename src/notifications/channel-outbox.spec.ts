import { MAX_QUEUED, OutboxState, RETRY_BASE_MS, RETRY_MAX_MS, emptyOutbox, enqueue, healthOf, settled, take } from './channel-outbox';

type N = { key: string; v: number };
const T0 = 1_000_000;

function sendNext(s: OutboxState<N>, now: number, perMinute = 10): { state: OutboxState<N>; sent: N | null; wake: number | null } {
  const t = take(s, now, perMinute);
  return 'send' in t ? { state: t.state, sent: t.send, wake: null } : { state: t.state, sent: null, wake: t.wake_at };
}

describe('a channel outbox (virtual time)', () => {
  it('given an update for a key not sent yet, then only the latest is sent', () => {
    let s = emptyOutbox<N>();
    s = enqueue(s, { key: 'cs_a', v: 1 });
    s = enqueue(s, { key: 'cs_b', v: 1 });
    s = enqueue(s, { key: 'cs_a', v: 2 });
    expect(s.queue).toEqual([{ key: 'cs_b', v: 1 }, { key: 'cs_a', v: 2 }]);
  });

  it('sends one at a time and at most the rate per minute, then says when it may send again', () => {
    let s = emptyOutbox<N>();
    for (let i = 0; i < 4; i++) s = enqueue(s, { key: `k${i}`, v: 1 });
    const times: number[] = [];
    let now = T0;
    for (let i = 0; i < 3; i++) {
      const r = sendNext(s, now, 3);
      expect(r.sent).not.toBeNull();
      // While one is sending, nothing else goes
      expect(sendNext(r.state, now, 3).sent).toBeNull();
      s = settled(r.state, r.sent as N, now, { ok: true });
      times.push(now);
      now += 1000;
    }
    const limited = sendNext(s, now, 3);
    expect(limited.sent).toBeNull();
    expect(limited.wake).toBe(times[0] + 60_000);
    expect(sendNext(limited.state, times[0] + 60_000, 3).sent).toEqual({ key: 'k3', v: 1 });
  });

  it('retries a failing send with a backoff that doubles up to a ceiling, and shows the channel failing until one succeeds', () => {
    let s = enqueue(emptyOutbox<N>(), { key: 'k', v: 1 });
    let now = T0;
    const waits: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = sendNext(s, now, 1000);
      s = settled(r.state, r.sent as N, now, { ok: false, error: 'answered 500', retry: true });
      waits.push((s.retry_at as number) - now);
      expect(sendNext(s, now + 1, 1000)).toMatchObject({ sent: null, wake: s.retry_at });
      now = s.retry_at as number;
    }
    expect(waits.slice(0, 4)).toEqual([RETRY_BASE_MS, 2 * RETRY_BASE_MS, 4 * RETRY_BASE_MS, 8 * RETRY_BASE_MS]);
    expect(Math.max(...waits)).toBe(RETRY_MAX_MS);
    expect(healthOf(s)).toMatchObject({ state: 'failing', failures: 10, last_error: 'answered 500', queued: 1 });
    const r = sendNext(s, now, 1000);
    s = settled(r.state, r.sent as N, now, { ok: true });
    expect(healthOf(s)).toMatchObject({ state: 'ok', failures: 0, last_error: null, queued: 0 });
  });

  it('given an update that came while a send failed, then the update goes and the failed one is not retried', () => {
    let s = enqueue(emptyOutbox<N>(), { key: 'k', v: 1 });
    const r = sendNext(s, T0);
    s = enqueue(r.state, { key: 'k', v: 2 });
    s = settled(s, r.sent as N, T0, { ok: false, error: 'timeout', retry: true });
    expect(s.queue).toEqual([{ key: 'k', v: 2 }]);
  });

  it('keeps at most MAX_QUEUED keys, dropping the oldest', () => {
    let s = emptyOutbox<N>();
    for (let i = 0; i < MAX_QUEUED + 5; i++) s = enqueue(s, { key: `k${i}`, v: 1 });
    expect(s.queue).toHaveLength(MAX_QUEUED);
    expect(s.queue[0].key).toBe('k5');
  });
});
