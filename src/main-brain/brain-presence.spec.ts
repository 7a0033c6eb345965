import { PresenceFacts, brainPresence, noBrainNotice } from './brain-presence';

/** This node (a) alone, leading; the hosted brain absent unless a test gives it. */
const facts = (over: Partial<PresenceFacts> = {}): PresenceFacts => ({
  driver: 'stream',
  hosted: null,
  node: 'a',
  lease_holder: 'a',
  lease_holder_up: true,
  round_listeners: 0,
  ...over,
});
const claude = { runtime: 'claude-code', version: '2.1.332', running_here: true, conversation_id: 'c0ffee' };

describe('brain presence', () => {
  it('Given the hosted brain running on this node, Then it is connected, naming its runtime, version, conversation and node', () => {
    expect(brainPresence(facts({ driver: 'agent', hosted: claude }))).toEqual({
      connected: true,
      driver: 'agent',
      hosted: true,
      runtime: 'claude-code',
      version: '2.1.332',
      conversation_id: 'c0ffee',
      node: 'a',
      listeners: null,
      summary: 'The hosted brain reads the messages: claude-code 2.1.332 on this node, conversation c0ffee.',
      how_to_connect: null,
    });
  });

  it('Given the hosted brain parked at its limit, Then it is still connected, and says until when rounds and messages wait', () => {
    const parked = { ...claude, parked: { reason: 'usage_limit' as const, resumes_at: '2026-12-06T04:10:00.000Z' } };
    expect(brainPresence(facts({ driver: 'agent', hosted: parked }))).toMatchObject({
      connected: true,
      summary: "The hosted brain reads the messages: claude-code 2.1.332 on this node, conversation c0ffee. It is paused at its model's usage limit until 04:10 UTC: rounds and messages wait, and the first round after it covers them.",
    });
  });

  it('Given a follower node, When the lease holder is up, Then the hosted brain is connected there; When no holder is up, Then none is, saying why and what to check', () => {
    const follower = facts({ driver: 'agent', hosted: { ...claude, running_here: false, conversation_id: null }, lease_holder: 'b' });
    expect(brainPresence(follower)).toMatchObject({ connected: true, node: 'b', conversation_id: null, summary: 'The hosted brain reads the messages: claude-code 2.1.332 on node b, which holds the supervisor lease.' });
    const leaderless = brainPresence({ ...follower, lease_holder_up: false });
    expect(leaderless).toMatchObject({ connected: false, node: null });
    expect(leaderless.summary).toBe('No brain is connected: the hosted brain (claude-code 2.1.332) is not running: no node holds the supervisor lease now, and only its holder hosts the brain.');
    expect(leaderless.how_to_connect).toContain('GET /api/v1/ready');
  });

  it('Given the hosted brain not running on the node that holds the lease (its start failed), Then no brain is connected', () => {
    const p = brainPresence(facts({ driver: 'agent', hosted: { ...claude, running_here: false, version: null } }));
    expect(p).toMatchObject({ connected: false, runtime: 'claude-code', version: null });
    expect(p.summary).toContain('(claude-code) is not running: it is not running on this node, which holds the supervisor lease');
  });

  it('Given the stream driver, When a client follows the rounds stream here, Then a brain is connected; When none does, Then none is, and how to connect one says the stream, the token and hosting one', () => {
    expect(brainPresence(facts({ round_listeners: 2 }))).toMatchObject({ connected: true, hosted: false, runtime: null, listeners: 2 });
    expect(brainPresence(facts({ round_listeners: 1 })).summary).toBe(
      'A brain you bring reads the messages: 1 client follows the rounds stream on this node; it reads the chat in its rounds (read_chat); a message does not start a round.',
    );
    const none = brainPresence(facts());
    expect(none).toMatchObject({ connected: false, listeners: 0 });
    expect(none.how_to_connect).toBe(
      "Follow GET /api/v1/session-os/main-brain/rounds/stream with the brain's token (npx brainstem token --brain), or put claude, codex, gemini or opencode on the service's PATH and restart it (BRAINSTEM_MAIN_BRAIN_DRIVER=auto hosts the brain).",
    );
    expect(noBrainNotice(none)).toBe(`${none.summary} Nothing reads this message until a brain connects. ${none.how_to_connect}`);
  });

  it.each([
    ['command', 'the command BRAINSTEM_MAIN_BRAIN_COMMAND runs at each round'],
    ['webhook', 'each round is POSTed to BRAINSTEM_MAIN_BRAIN_WEBHOOK_URL'],
  ])('Given the %s driver, Then the brain is reached at each round: connected, saying how, and naming no secret', (driver, how) => {
    const p = brainPresence(facts({ driver }));
    expect(p).toMatchObject({ connected: true, driver, hosted: false, listeners: null, how_to_connect: null });
    expect(p.summary).toContain(how);
  });
});
