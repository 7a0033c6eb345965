import { openSse } from '../support/sse';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const BASE = '/api/v1/session-os/main-brain';

/** Who reads the main chat, over HTTP: GET …/presence, and the chat's notice for a message no brain will read. */
describe('the brain presence over HTTP, with the stream driver', () => {
  const t = useTestApp({}, { listen: true });
  const presence = async (): Promise<Json> => {
    const res = await t.inject({ method: 'GET', url: `${BASE}/presence` });
    expect(res.statusCode).toBe(200);
    return res.json().presence as Json;
  };
  const say = async (text: string): Promise<Json[]> => {
    const res = await t.inject({ method: 'POST', url: `${BASE}/messages`, payload: { text } });
    expect(res.statusCode).toBe(201);
    const seq = res.json().message.seq as number;
    return ((await t.inject({ method: 'GET', url: `${BASE}/messages` })).json().messages as Json[]).filter((m) => m.seq >= seq);
  };

  it('given no client following the rounds, then it says no brain is connected and how to connect one, and a message is followed by that notice in the chat', async () => {
    const p = await presence();
    expect(p).toMatchObject({ connected: false, driver: 'stream', hosted: false, runtime: null, listeners: 0 });
    expect(p.how_to_connect).toContain(`Follow ${'GET /api/v1/session-os/main-brain/rounds/stream'} with the brain's token`);
    const posted = await say('is anyone reading?');
    expect(posted.map((m) => [m.role, m.kind])).toEqual([
      ['user', 'message'],
      ['system', 'notice'],
    ]);
    expect(posted[1].text).toBe(`${p.summary} Nothing reads this message until a brain connects. ${p.how_to_connect}`);
    // The route is the user's: the brain's token is refused.
    expect((await t.rawInject({ method: 'GET', url: `${BASE}/presence`, headers: t.auth('main_brain') })).statusCode).toBe(403);
  });

  it('given a brain following the rounds stream, then it says a brain you bring reads the messages and a message gets no notice; once it goes away, no brain again', async () => {
    const brain = await openSse(`${t.url}${BASE}/rounds/stream`, t.auth('main_brain'));
    try {
      await brain.take(1);
      expect(await presence()).toMatchObject({ connected: true, driver: 'stream', listeners: 1, how_to_connect: null });
      expect((await say('now someone reads')).map((m) => [m.role, m.kind])).toEqual([['user', 'message']]);
    } finally {
      brain.close();
    }
    await waitFor(async () => (await presence()).connected === false || undefined, { what: 'the brain to be gone' });
    expect((await say('gone again?')).map((m) => m.role)).toEqual(['user', 'system']);
  });
});

describe('the brain presence over HTTP, with the webhook driver', () => {
  const t = useTestApp({ BRAINSTEM_MAIN_BRAIN_DRIVER: 'webhook', BRAINSTEM_MAIN_BRAIN_WEBHOOK_URL: 'http://127.0.0.1:9/rounds' });

  it('given rounds POSTed to a webhook, then a brain is reached at each round: connected, naming the setting, not its URL', async () => {
    const p = (await t.inject({ method: 'GET', url: `${BASE}/presence` })).json().presence as Json;
    expect(p).toMatchObject({ connected: true, driver: 'webhook', hosted: false, how_to_connect: null });
    expect(p.summary).toContain('BRAINSTEM_MAIN_BRAIN_WEBHOOK_URL');
    expect(JSON.stringify(p)).not.toContain('127.0.0.1:9');
  });
});
