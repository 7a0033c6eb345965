import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Journal, JournalEvent } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { fakeModelClaudeEnv } from '../support/claude-env';
import { FakeAnthropicApi } from '../support/fake-anthropic-api';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { WorkerReaper, isAlive } from '../support/workers';

/**
 * Loop detection against a real `claude` (BRAINSTEM_REAL_CLAUDE) on a fake Anthropic API whose model keeps asking for
 * the same failing Bash call: what claude's stream-json says of each tool call and result is what the detector reads.
 * Opt-in, as the other real-runtime specs: BRAINSTEM_REAL_CLAUDE=/path/to/claude npm test -- loops-real.
 */
const REAL_CLAUDE = process.env.BRAINSTEM_REAL_CLAUDE;
/** After this many model calls the fake model gives up and answers: the turn ends. */
const CALLS = 8;

(REAL_CLAUDE ? describe : describe.skip)('loops with a real claude', () => {
  let t: TestApp;
  let api: FakeAnthropicApi;
  const reaper = new WorkerReaper();
  const dirs = { bin: tempDir('brainstem-claude-bin-'), home: tempDir('brainstem-claude-home-'), cwd: tempDir('brainstem-cwd-') };

  beforeAll(async () => {
    symlinkSync(REAL_CLAUDE!, join(dirs.bin.path, 'claude'));
    t = await startTestApp({ BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '50' }, { listen: true });
  });
  afterAll(async () => {
    reaper.killAll();
    await api?.close();
    await t.close();
    for (const d of Object.values(dirs)) d.remove();
  });

  const events = (id: string): Promise<JournalEvent[]> => t.app.get<Journal>(JOURNAL).readStream(`session-${id}`);

  /** A claude-code session on a fake model whose replies `reply` chooses, Bash allowed, supervised. */
  async function startClaude(app: TestApp, reply: ConstructorParameters<typeof FakeAnthropicApi>[0]): Promise<string> {
    api = new FakeAnthropicApi(reply);
    api.releaseAll();
    const env = fakeModelClaudeEnv(await api.start(), dirs.home.path, dirs.bin.path);
    expect((await app.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/autonomous', payload: { enabled: true, task_hint: 'list the fixtures' } })).statusCode).toBe(200);
    const started = await app.inject({
      method: 'POST',
      url: '/api/v1/coding-sessions',
      payload: { cwd: dirs.cwd.path, runtime: 'claude-code', env, prompt: 'list the fixtures', args: ['--allowedTools', 'Bash'] },
    });
    expect(started.statusCode).toBe(201);
    reaper.track(started.json().pid);
    return started.json().id;
  }

  it('given the model repeats the same failing Bash call, then session.loop_detected is journaled, then a round whose reasons name the loop', async () => {
    const missing = join(dirs.cwd.path, 'no-such-dir');
    const id = await startClaude(t, (n) => (n <= CALLS ? { tool: 'Bash', input: { command: `ls ${missing}`, description: 'list the fixtures' } } : { text: 'I give up.' }));

    const detected = await waitFor(
      async () => {
        const found = (await events(id)).filter((e) => e.type === 'session.loop_detected').map((e) => e.data as Record<string, unknown>);
        return found.some((d) => d.pattern === 'repeated_call') && found.some((d) => d.pattern === 'repeated_failure') ? found : undefined;
      },
      { timeoutMs: 90000, what: 'the loop detected' },
    );
    // The fifth identical call is the loop (BRAINSTEM_LOOP_REPEATED_CALL, 5); the fifth identical failure too.
    const call = detected.find((d) => d.pattern === 'repeated_call')!;
    expect(call).toMatchObject({ count: 5, escalate_after: 3 });
    expect(call.evidence).toContain(`5 × Bash {"command":"ls ${missing}"`);
    expect(call.evidence).toMatch(/→ failed with exit code 2: Exit code 2\n.*No such file or directory/);
    const failure = detected.find((d) => d.pattern === 'repeated_failure')!;
    expect(failure).toMatchObject({ count: 5 });
    expect(failure.summary).toContain('the same call failed with exit code 2 5 times');
    // Each pattern once: the cooldown (BRAINSTEM_LOOP_COOLDOWN_S, 300 s) keeps the rest of the loop quiet.
    expect(detected.filter((d) => d.pattern === 'repeated_call')).toHaveLength(1);

    const round = await waitFor(
      async () => {
        const rounds = (await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/rounds' })).json().rounds as Array<{ reasons: Array<{ session_id: string; trigger: string }>; prompt: string }>;
        return rounds.find((r) => r.reasons.some((x) => x.session_id === id && x.trigger === 'loop_repeated_call'));
      },
      { timeoutMs: 30000, what: 'a round for the loop' },
    );
    expect(round.prompt).toContain('is going round in circles: the same tool call again and again');
    expect(round.prompt).toContain('the same tool call with the same arguments 5 times in a row');
    expect(round.prompt).toContain('```worker-data');
    expect(round.prompt).toContain(`ls ${missing}`);
  }, 150000);

  it('given the loop persists after the brain was woken for it, then the session is held and claude interrupts its turn on its own control request, staying alive', async () => {
    const held = await startTestApp({ BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '50', BRAINSTEM_LOOP_COOLDOWN_S: '1', BRAINSTEM_LOOP_ESCALATE_AFTER: '1' }, { listen: true });
    try {
      await api.close();
      // A call that takes a while, so the loop is still going when its cooldown ends; the model never stops asking for it.
      const id = await startClaude(held, () => ({ tool: 'Bash', input: { command: 'node -e "setTimeout(() => process.exit(3), 300)"', description: 'check' } }));
      const s = await waitFor(
        async () => {
          const status = (await held.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json();
          return status.held !== null && status.state === 'pending_handling' ? status : undefined;
        },
        { timeoutMs: 90000, what: 'the session held and its turn ended' },
      );
      expect(s.held).toMatchObject({ reason: 'loop' });
      // The model never stops asking for the call: the one turn ended only after the hold, claude answering its interrupt.
      const types = (await held.app.get<Journal>(JOURNAL).readStream(`session-${id}`)).map((e) => e.type);
      expect(types.lastIndexOf('session.turn_ended')).toBeGreaterThan(types.indexOf('session.held'));
      expect(types.filter((x) => x === 'session.turn_ended')).toHaveLength(1);
      // Interrupted, not stopped: the same claude process lives on and waits for its next instruction.
      expect(s.exit_reason).toBeNull();
      expect(isAlive(s.pid)).toBe(true);
    } finally {
      await held.close();
    }
  }, 150000);
});
