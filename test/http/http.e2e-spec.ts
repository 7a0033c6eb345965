import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { openSse, readSse } from '../support/sse';
import { useTestApp } from '../support/use-test-app';

describe('HTTP conventions and audit endpoints', () => {
  const t = useTestApp({ BRAINSTEM_BODY_LIMIT_BYTES: '4096' }, { listen: true });
  let journal: Journal;

  beforeAll(async () => {
    journal = t.app.get<Journal>(JOURNAL);
    for (let i = 1; i <= 6; i++) await journal.append(i % 2 ? 'odd' : 'even', [{ type: i % 3 ? 'test.tick' : 'test.tock', data: { i } }]);
  });

  it('answers health', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('rejects an unknown query field with 400 naming it', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/journal/events?limit=2&bogus=1' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'invalid_input' });
    expect(res.json().message).toContain('bogus');
  });

  it.each(['toString', 'constructor', 'hasOwnProperty', 'valueOf', '__proto__'])('rejects a field named like an Object.prototype member (%s) as unknown, in a query and in a body', async (name) => {
    const query = await t.inject({ method: 'GET', url: `/api/v1/journal/events?${name}=1` });
    expect(query.statusCode).toBe(400);
    expect(query.json().message).toBe(`${name}: this key name is not allowed (it names a built-in object member)`);
    const body = await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/autonomous', payload: { enabled: false, [name]: 1 } });
    expect(body.statusCode).toBe(400);
    expect(body.json().message).toBe(`${name}: this key name is not allowed (it names a built-in object member)`);
  });

  it('names a nested __proto__ or constructor.prototype key in a JSON body (400), and nothing is polluted', async () => {
    for (const [payload, path] of [
      ['{"enabled":false,"a":{"__proto__":{"polluted":1}}}', 'a.__proto__'],
      ['{"enabled":false,"a":[{"constructor":{"prototype":{"polluted":1}}}]}', 'a[0].constructor'],
    ]) {
      const res = await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/autonomous', payload, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_input', message: `${path}: this key name is not allowed (it names a built-in object member)` });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('rejects a badly typed query value with 400', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/journal/events?limit=many' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('limit');
  });

  it.each(['after_seq=', 'limit=0x10', 'limit=1e2', 'limit=%205', 'after_seq=1.0'])('takes only plain digits as a query integer: %s gets 400', async (query) => {
    const res = await t.inject({ method: 'GET', url: `/api/v1/journal/events?${query}` });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain(`${query.split('=')[0]}: must be an integer number`);
  });

  it('answers 413 for a body over the limit and 400 for malformed JSON', async () => {
    const big = await t.inject({
      method: 'POST',
      url: '/api/v1/journal/events',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ blob: 'x'.repeat(10000) }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ code: 'payload_too_large' });
    const bad = await t.inject({ method: 'POST', url: '/api/v1/journal/events', headers: { 'content-type': 'application/json' }, payload: '{nope' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_input');
    const plain = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', headers: { 'content-type': 'text/plain' }, payload: 'hello' });
    expect(plain.statusCode).toBe(415);
    expect(plain.json().code).toBe('unsupported_media_type');
  });

  it('pages the journal with filters and a continuation cursor', async () => {
    const first = await t.inject({ method: 'GET', url: '/api/v1/journal/events?limit=2' });
    expect(first.json().events.map((e: { seq: number }) => e.seq)).toEqual([1, 2]);
    expect(first.json().next_after_seq).toBe(2);
    const rest = await t.inject({ method: 'GET', url: '/api/v1/journal/events?after_seq=2' });
    expect(rest.json().events.map((e: { seq: number }) => e.seq)).toEqual([3, 4, 5, 6]);
    expect(rest.json().next_after_seq).toBeNull();
    const odd = await t.inject({ method: 'GET', url: '/api/v1/journal/events?stream=odd&type=test.tick' });
    expect(odd.json().events.map((e: { data: { i: number } }) => e.data.i)).toEqual([1, 5]);
  });

  it('verifies the chain', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/journal/verify' });
    expect(res.json()).toMatchObject({ ok: true, head_seq: 6, checked: 6 });
    expect(res.json().head_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('streams events over SSE and resumes after Last-Event-ID', async () => {
    const all = await readSse(`${t.url}/api/v1/events/stream?after_seq=0`, 6, t.auth());
    expect(all.map((e) => e.id)).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(JSON.parse(all[0].data)).toMatchObject({ seq: 1, stream: 'odd', type: 'test.tick' });
    const resumed = readSse(`${t.url}/api/v1/events/stream`, 3, { ...t.auth(), 'last-event-id': '4' });
    await journal.append('live', [{ type: 'test.live', data: {} }]);
    const got = await resumed;
    expect(got.map((e) => e.id)).toEqual(['5', '6', '7']);
    expect(got[2].event).toBe('test.live');
  });

  it('starts an SSE stream given no after_seq nor Last-Event-ID at the head: live events only, and a reconnect from its first id misses none', async () => {
    // Given a journal with history
    const head = journal.head().seq;
    expect(head).toBeGreaterThanOrEqual(6);
    // When a client connects without a cursor; Then the first message is only the head's seq (where a reconnect resumes)
    const sse = await openSse(`${t.url}/api/v1/events/stream`, t.auth());
    expect(await sse.take(1)).toEqual([{ id: String(head), data: '' }]);
    // And what is appended next arrives, and nothing of the history before it
    await journal.append('live', [{ type: 'test.after_head', data: {} }]);
    const [live] = await sse.take(1);
    expect(live).toMatchObject({ id: String(head + 1), event: 'test.after_head' });
    sse.close();
    // When it reconnects with that first id as Last-Event-ID (EventSource does), it gets what came after it
    expect((await readSse(`${t.url}/api/v1/events/stream`, 1, { ...t.auth(), 'last-event-id': String(head) })).map((e) => e.id)).toEqual([String(head + 1)]);
  });

  it('rejects a malformed Last-Event-ID', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/events/stream', headers: { 'last-event-id': 'abc' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('Last-Event-ID');
  });
});
