import { Journal, JournalEvent } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { AgentHomes, FAKE_BIN, isAlive } from '../support/workers';

type Reason = { session_id: string; trigger: string; message: string | null; evidence?: string };
type Round = { id: string; status: string; reasons: Reason[]; prompt: string };

/**
 * A worker going round in circles, end to end with a real child process per turn (the fake `codex`, whose turn runs
 * `make`, failing the same way every 100 ms, until it is interrupted): the loop is detected from its `exec --json`
 * items, journaled, wakes the brain with the loop as its reason, and once it persists after the brain was woken for it
 * (BRAINSTEM_LOOP_ESCALATE_AFTER=1) the session is held, its turn's process interrupted, and the user asked in the
 * chat; the brain cannot release it, the user's confirmation does.
 */
describe('loops: detection, a wake-up, then a hold with the turn interrupted and the user asked', () => {
  const cwd = tempDir('brainstem-loops-cwd-');
  const homes = new AgentHomes();
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '50', BRAINSTEM_LOOP_COOLDOWN_S: '1', BRAINSTEM_LOOP_ESCALATE_AFTER: '1' });
  });
  afterAll(async () => {
    homes.cleanUp();
    await t.close();
    cwd.remove();
  });

  const events = (id: string): Promise<JournalEvent[]> => t.app.get<Journal>(JOURNAL).readStream(`session-${id}`);
  const ofType = (all: JournalEvent[], type: string) => all.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);
  const get = async (url: string) => (await t.inject({ method: 'GET', url: `/api/v1${url}` })).json();

  it('given a supervised codex session failing `make` again and again, then the brain is woken for the loop, then the session is held, its turn interrupted, and only the user releases it', async () => {
    expect((await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/autonomous', payload: { enabled: true, task_hint: 'build it' } })).statusCode).toBe(200);
    const home = homes.create('brainstem-loops-codex-');
    const env = { PATH: `${FAKE_BIN}:${process.env.PATH}`, CODEX_HOME: home };
    const created = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, runtime: 'codex', env, prompt: 'run make in a loop' } });
    expect(created.statusCode).toBe(201);
    const id: string = created.json().id;

    // Held: the loop persisted after the brain was woken for it once.
    const held = await waitFor(
      async () => {
        const s = await get(`/coding-sessions/${id}`);
        return s.held !== null && s.state === 'pending_handling' ? s : undefined;
      },
      { timeoutMs: 30000, what: 'the session held, its turn ended' },
    );
    expect(held.held).toMatchObject({ reason: 'loop', detail: expect.stringContaining('after 1 wake-ups of the main brain') });
    expect(held.loop).toMatchObject({ pattern: expect.any(String), count: expect.any(Number), evidence: expect.stringContaining('make') });

    const all = await events(id);
    const detected = ofType(all, 'session.loop_detected');
    expect(detected.map((d) => d.pattern)).toContain('repeated_call');
    const call = detected.find((d) => d.pattern === 'repeated_call')!;
    expect(call).toMatchObject({ count: expect.any(Number), since: expect.any(Number), escalate_after: 1 });
    expect(call.summary).toContain('the same tool call with the same arguments');
    expect(call.evidence).toContain(`command_execution {"command":"/bin/bash -lc 'make'"}`);
    expect(Buffer.byteLength(String(call.evidence))).toBeLessThanOrEqual(2048);
    // The turn's process got SIGINT and is gone; its end reads as interrupted, and the conversation goes on.
    expect(ofType(all, 'session.turn_ended').map((d) => d.result)).toEqual(['codex turn interrupted by Brainstem']);
    for (const pid of AgentHomes.pids(home)) expect(isAlive(pid)).toBe(false);
    expect(ofType(all, 'session.exited')).toEqual([]);

    // The brain was woken for the loop first: a round whose reasons name it, with the worker's evidence quoted as data.
    const supervision = await t.app.get<Journal>(JOURNAL).readStream('supervision');
    expect(ofType(supervision, 'supervision.loop_woken')).toContainEqual({ session_id: id, pattern: 'repeated_call', signature: call.signature, wakes: 1 });
    expect(ofType(supervision, 'supervision.loop_escalated')).toContainEqual({ session_id: id, pattern: 'repeated_call', signature: call.signature, wakes: 1 });
    const rounds = (await get('/session-os/main-brain/rounds')).rounds as Round[];
    const loopRound = rounds.find((r) => r.reasons.some((x) => x.session_id === id && x.trigger === 'loop_repeated_call'));
    expect(loopRound).toBeDefined();
    const reason = loopRound!.reasons.find((x) => x.trigger === 'loop_repeated_call')!;
    expect(reason.message).toContain('wake-up 1 of 1 for this loop before Brainstem holds the session and asks the user');
    expect(loopRound!.prompt).toContain('is going round in circles: the same tool call again and again');
    expect(loopRound!.prompt).toMatch(/what it tried and what came back:\n +```worker-data\n.*command_execution/);

    // No more turns while held.
    const refused = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/messages`, payload: { text: 'try again' } });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('session_held');

    // The user is asked in the chat, through the human gate.
    const confirmations = (await get('/session-os/main-brain/confirmations?status=pending')).confirmations as Array<{ id: string; tool: string; args: object; requested_by: string; description: string }>;
    const ask = confirmations.find((c) => c.tool === 'release_session');
    expect(ask).toMatchObject({ args: { session: id }, requested_by: 'brainstem' });
    expect(ask!.description).toContain('kept going round in circles');
    const chat = (await get('/session-os/main-brain/messages')).messages as Array<{ text: string }>;
    expect(chat.some((m) => m.text.includes(ask!.id) && m.text.includes('what Brainstem asks'))).toBe(true);

    // The brain cannot release it: its call waits for the user too, and its confirm route is the user's alone.
    const byBrain = await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/release_session', headers: t.auth('main_brain'), payload: { session: id } });
    expect(byBrain.json().result).toMatchObject({ status: 'waiting_for_user' });
    expect((await t.inject({ method: 'POST', url: `/api/v1/session-os/main-brain/confirmations/${ask!.id}/confirm`, headers: t.auth('main_brain') })).statusCode).toBe(403);
    expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/release`, headers: t.auth('main_brain') })).statusCode).toBe(403);
    expect((await get(`/coding-sessions/${id}`)).held).not.toBeNull();

    // The user's confirm releases it, and the worker takes a turn again.
    const confirmed = await t.inject({ method: 'POST', url: `/api/v1/session-os/main-brain/confirmations/${ask!.id}/confirm` });
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.json()).toMatchObject({ status: 'confirmed', outcome: { ok: true } });
    expect((await get(`/coding-sessions/${id}`)).held).toBeNull();
    expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/messages`, payload: { text: 'now build the docs' } })).statusCode).toBe(200);
    await waitFor(async () => ((await events(id)).filter((e) => e.type === 'session.turn_ended').length === 2 ? true : undefined), { timeoutMs: 30000, what: 'the next turn' });
  }, 60000);
});
