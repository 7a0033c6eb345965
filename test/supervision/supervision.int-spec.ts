import { BehaviorSubject } from 'rxjs';
import { EventBus } from '../../src/bus/event-bus';
import { soleNode } from '../../src/cluster/node-directory.port';
import { LeaseState } from '../../src/cluster/lease.rules';
import { SupervisorLease } from '../../src/cluster/supervisor-lease.port';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { Journal } from '../../src/journal/journal.port';
import { RoundDriver } from '../../src/supervision/round-driver.port';
import { SUPERVISION_STREAM, SupervisionService, SupervisionSettings } from '../../src/supervision/supervision.service';
import { CapturedLogger } from '../support/captured-logger';
import { MemorySessionDirectory } from '../support/memory-session-directory';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';

let n = 0;
const ids = () => String(++n).padStart(6, '0');

describe('supervision service over a real journal', () => {
  let dir: ReturnType<typeof tempDir>;
  let journal: Journal;
  let bus: EventBus;
  let sessions: MemorySessionDirectory;
  let svc: SupervisionService;

  const boot = async (settings: Partial<SupervisionSettings> = {}, driver?: RoundDriver, lease?: SupervisorLease) => {
    const cluster = lease ? { lease, nodes: soleNode('local') } : undefined;
    svc = new SupervisionService(bus, journal, sessions, { debounce_ms: 30, restore_ttl_s: 900, round_timeout_s: 600, ...settings }, Date.now, ids, driver, cluster);
    await svc.start();
  };

  beforeEach(async () => {
    dir = tempDir('brainstem-sup-');
    journal = await openLevelJournal(dir.path);
    bus = new EventBus(journal);
    sessions = new MemorySessionDirectory(journal);
    for (const id of ['cs_a', 'cs_b', 'cs_c', 'cs_d', 'cs_e']) sessions.add(id);
    await boot();
  });
  afterEach(async () => {
    svc.stop();
    await journal.close();
    dir.remove();
  });

  const inFlight = () => svc.listRounds().filter((r) => r.status === 'in_flight');

  it('is null until first enabled, then reports the supervision state object', async () => {
    expect(svc.status()).toEqual({ autonomous: null });
    await svc.enable({ task_hint: 'ship', max_turns: 10 }, 'user', 'test');
    expect(svc.status().autonomous).toMatchObject({ enabled: true, turns_used: 0, max_turns: 10, task_hint: 'ship', started_by: 'user' });
  });

  it('merges a burst from 5 sessions inside the debounce window into exactly one round naming all 5', async () => {
    await svc.enable({}, 'user', 'test');
    await Promise.all(['cs_a', 'cs_b', 'cs_c', 'cs_d', 'cs_e'].map((id) => sessions.emit(id, 'session.state_changed', { from: 'working', to: 'pending_handling' })));
    const [round] = await waitFor(() => (svc.listRounds().length ? svc.listRounds() : undefined), { what: 'a round' });
    expect(round.reasons.map((r) => r.session_id).sort()).toEqual(['cs_a', 'cs_b', 'cs_c', 'cs_d', 'cs_e']);
    expect(round.prompt).toContain('w3 (cs_c) finished its turn');
    expect(svc.status().autonomous?.turns_used).toBe(1);
  });

  it('merges triggers that arrive during a round into exactly one follow-up round after it completes', async () => {
    await svc.enable({}, 'user', 'test');
    await sessions.emit('cs_a', 'session.progress', { status: 'completed', message: 'done' });
    const [first] = await waitFor(() => (inFlight().length ? inFlight() : undefined), { what: 'first round' });
    await sessions.emit('cs_b', 'session.asked_human', { question: 'Which DB?' });
    await sessions.emit('cs_c', 'session.blocked', { reason: 'no token' });
    await sessions.emit('cs_b', 'session.asked_human', { question: 'Which DB, really?' });
    // Longer than the window: the flush during the round must not start a round, nor lose the triggers.
    await new Promise((r) => setTimeout(r, 100));
    expect(svc.listRounds()).toHaveLength(1);
    await svc.completeRound(first.id, 'dispatched');
    const rounds = await waitFor(() => (svc.listRounds().length === 2 ? svc.listRounds() : undefined), { what: 'the follow-up round' });
    expect(rounds[0].reasons.map((r) => [r.session_id, r.trigger, r.message])).toEqual([
      ['cs_c', 'notify_blocked', 'no token'],
      ['cs_b', 'ask_human', 'Which DB, really?'],
    ]);
    expect(svc.listRounds()[1]).toMatchObject({ status: 'completed', summary: 'dispatched' });
  });

  it('names a signal and the state change it causes as one reason, with the state the session entered', async () => {
    await svc.enable({}, 'user', 'test');
    // As the sessions module journals it: the signal and its state change in one append, published once the
    // directory has adopted the new state.
    await journal.append(
      'session-cs_b',
      [
        { type: 'session.asked_human', data: { question: 'Which DB?' } },
        { type: 'session.state_changed', data: { from: 'working', to: 'pending_decision', cause: 'session.asked_human' } },
      ],
      { expectedVersion: 'no_stream', apply: () => Object.assign(sessions.sessions.find((s) => s.id === 'cs_b')!, { state: 'pending_decision' }) },
    );
    const [round] = await waitFor(() => (svc.listRounds().length ? svc.listRounds() : undefined), { what: 'a round' });
    expect(round.reasons).toEqual([{ session_id: 'cs_b', alias: 'w2', trigger: 'ask_human', state: 'pending_decision', message: 'Which DB?', since: expect.any(String) }]);
  });

  it('never wakes for an excluded session, a working heartbeat or request_context', async () => {
    await svc.enable({ scope_mode: 'except', scope_session_ids: ['w1'] }, 'user', 'test');
    await sessions.emit('cs_a', 'session.asked_human', { question: 'hello?' });
    await sessions.emit('cs_b', 'session.progress', { status: 'working' });
    await sessions.emit('cs_b', 'session.context_requested', { query: 'where is X' });
    await sessions.emit('cs_c', 'session.progress', { status: 'needs_review' });
    const rounds = await waitFor(() => (svc.listRounds().length ? svc.listRounds() : undefined), { what: 'a round' });
    expect(rounds[0].reasons.map((r) => [r.session_id, r.trigger])).toEqual([['cs_c', 'progress_needs_review']]);
  });

  it('closes with max_turns when the last turn ends, and starts no further round', async () => {
    await svc.enable({ max_turns: 2 }, 'user', 'test');
    for (const id of ['cs_a', 'cs_b']) {
      await sessions.emit(id, 'session.blocked', { reason: 'x' });
      const [r] = await waitFor(() => (inFlight().length ? inFlight() : undefined), { what: `round for ${id}` });
      await svc.completeRound(r.id);
    }
    expect(svc.status().autonomous).toMatchObject({ enabled: false, turns_used: 2, closed_reason: 'max_turns' });
    await sessions.emit('cs_c', 'session.blocked', { reason: 'y' });
    await new Promise((r) => setTimeout(r, 100));
    expect(svc.listRounds()).toHaveLength(2);
  });

  it('wakes no round for a stop someone asked for while other workers live; the next round says it since', async () => {
    await svc.enable({}, 'user', 'test');
    await sessions.emit('cs_a', 'session.exited', { code: null, signal: 'SIGTERM', reason: 'stopped' });
    await sessions.emit('cs_b', 'session.blocked', { reason: 'no creds' });
    const rounds = await waitFor(() => (svc.listRounds().length ? svc.listRounds() : undefined), { what: 'a round' });
    expect(rounds[0].reasons.map((r) => [r.session_id, r.trigger])).toEqual([['cs_b', 'notify_blocked']]);
  });

  it('closes with converged and no round when the last supervised worker exits', async () => {
    await svc.enable({ scope_mode: 'only', scope_session_ids: ['cs_a', 'cs_b'] }, 'user', 'test');
    await sessions.emit('cs_a', 'session.exited', { code: 0, reason: 'done' });
    const [check] = await waitFor(() => (svc.listRounds().length ? svc.listRounds() : undefined), { what: 'a check round for the first exit' });
    expect(check.reasons[0]).toMatchObject({ session_id: 'cs_a', trigger: 'worker_exited' });
    await svc.completeRound(check.id);
    await sessions.emit('cs_b', 'session.exited', { code: 0, reason: 'done' });
    await waitFor(() => !svc.isOn(), { what: 'convergence close' });
    expect(svc.status().autonomous?.closed_reason).toBe('converged');
    expect(svc.listRounds()).toHaveLength(1);
  });

  it('closes with converged when the last two supervised workers exit in one group commit', async () => {
    await svc.enable({ scope_mode: 'only', scope_session_ids: ['cs_a', 'cs_b'] }, 'user', 'test');
    // Both exits are committed together: both are applied before either is published.
    await Promise.all(['cs_a', 'cs_b'].map((id) => sessions.emit(id, 'session.exited', { code: 0, reason: 'done' })));
    await waitFor(() => !svc.isOn(), { what: 'convergence close' });
    expect(svc.status().autonomous?.closed_reason).toBe('converged');
    expect(svc.listRounds()).toHaveLength(0);
  });

  it('refuses finish_supervision once supervision is off, so the wrap-up summary is not dropped unseen', async () => {
    await svc.enable({ scope_mode: 'only', scope_session_ids: ['cs_a'] }, 'user', 'test');
    await sessions.emit('cs_a', 'session.exited', { code: 0, reason: 'done' });
    await waitFor(() => !svc.isOn(), { what: 'convergence close' });
    await expect(svc.finish('all merged')).rejects.toMatchObject({ code: 'supervision_off', message: expect.stringContaining('closed: converged') });
    expect(svc.status().autonomous).toMatchObject({ closed_reason: 'converged', summary: null });
  });

  it('/supervise sets the goal and runs one round at once', async () => {
    await svc.supervise('fix the build', 'user');
    const [r] = await waitFor(() => (svc.listRounds().length ? svc.listRounds() : undefined), { what: 'the initial round', timeoutMs: 5000 });
    expect(svc.status().autonomous).toMatchObject({ task_hint: 'fix the build', turns_used: 1 });
    expect(r.reasons).toEqual([{ session_id: '-', alias: '-', trigger: 'initial', state: null, message: 'fix the build' }]);
  });

  it('times out a round that is never completed, releasing the lock', async () => {
    svc.stop();
    await boot({ round_timeout_s: 1 });
    await svc.enable({}, 'user', 'test');
    await sessions.emit('cs_a', 'session.blocked', { reason: 'x' });
    await waitFor(() => svc.listRounds()[0]?.status === 'timed_out', { what: 'timeout' });
    await sessions.emit('cs_b', 'session.blocked', { reason: 'y' });
    await waitFor(() => svc.listRounds().length === 2, { what: 'the next round' });
    await expect(svc.completeRound(svc.listRounds()[1].id)).rejects.toMatchObject({ code: 'round_already_ended' });
    await expect(svc.completeRound('rd_nope')).rejects.toMatchObject({ code: 'round_not_found' });
  });

  it('ends a round whose delivery fails as failed, with the reason, and rebuilds it so from the events and from a snapshot', async () => {
    // Given a brain whose delivery fails
    svc.stop();
    const crashing: RoundDriver = { name: 'crashing', deliver: () => Promise.reject(new Error('the brain process exited mid-turn')) };
    await boot({}, crashing);
    await svc.enable({}, 'user', 'test');
    // When a round is delivered to it
    await sessions.emit('cs_a', 'session.blocked', { reason: 'x' });
    // Then the round ends failed, naming why, and its turn is used
    const [round] = await waitFor(() => (svc.listRounds()[0]?.status === 'failed' ? svc.listRounds() : undefined), { what: 'the failed round' });
    const failure = 'delivery to the main brain failed (crashing): the brain process exited mid-turn';
    expect(round).toMatchObject({ status: 'failed', failure, summary: null });
    expect(svc.status().autonomous).toMatchObject({ turns_used: 1, round_in_flight: null });
    // And a restart rebuilds it from the events, then from a snapshot
    svc.stop();
    await boot();
    expect(svc.getRound(round.id)).toEqual(round);
    await svc.saveSnapshot();
    svc.stop();
    await boot();
    expect(svc.getRound(round.id)).toEqual(round);
    expect(svc.status().autonomous).toMatchObject({ enabled: true, turns_used: 1, round_in_flight: null });
  });

  it('loads a snapshot written before rounds could fail: its rounds have no failure field, and read failure null', async () => {
    // Given a completed round, snapshotted, and the snapshot rewritten as it was before `failure` existed
    await svc.enable({}, 'user', 'test');
    await sessions.emit('cs_a', 'session.blocked', { reason: 'x' });
    const [round] = await waitFor(() => (svc.listRounds().length ? svc.listRounds() : undefined), { what: 'a round' });
    await svc.completeRound(round.id, 'done');
    await svc.saveSnapshot();
    svc.stop();
    type Stored = { rounds: Array<{ round: Record<string, unknown> }> };
    const snap = (await journal.loadSnapshot<Stored>(SUPERVISION_STREAM))!;
    for (const r of snap.state.rounds) delete r.round.failure;
    await journal.saveSnapshot(SUPERVISION_STREAM, snap);
    // When the service boots from it
    await boot();
    // Then the round reads as it did, with failure null
    expect(svc.getRound(round.id)).toMatchObject({ status: 'completed', summary: 'done', failure: null });
  });

  it('refuses only/except naming no valid session and stores nothing', async () => {
    await expect(svc.enable({ scope_mode: 'only', scope_session_ids: ['w99'] }, 'user', 'test')).rejects.toMatchObject({ code: 'scope_names_no_session' });
    expect(svc.status()).toEqual({ autonomous: null });
    await expect(svc.enable({ max_turns: 0 }, 'user', 'test')).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('keeps the scope rule for sessions created later across a restart: only excludes them, except and all do not, invert leaves it', async () => {
    // Given scope only
    await svc.setScope('only', ['cs_a'], 'test');
    expect(sessions.add('cs_new1').excluded).toBe(true);
    // When the service restarts (from the events, then from a snapshot)
    svc.stop();
    sessions.newSessionsExcluded = false;
    await boot();
    // Then the rule still holds; invert changes nothing for it, except lifts it
    expect(sessions.newSessionsExcluded).toBe(true);
    await svc.setScope('invert', ['cs_b'], 'test');
    expect(sessions.newSessionsExcluded).toBe(true);
    await svc.setScope('except', ['cs_a'], 'test');
    expect(sessions.add('cs_new2').excluded).toBe(false);
    await svc.saveSnapshot();
    svc.stop();
    sessions.newSessionsExcluded = true;
    await boot();
    expect(sessions.newSessionsExcluded).toBe(false);
  });

  it('a round carries each woken session\'s last turn result, else its output tail', async () => {
    // Given one session whose turn ended with a result and one with only output
    await svc.enable({}, 'user', 'test');
    sessions.sessions.find((s) => s.id === 'cs_a')!.last_result = 'merged the fix';
    sessions.outputs.set('cs_b', ['building', 'error: missing semicolon']);
    // When both wake a round
    await sessions.emit('cs_a', 'session.state_changed', { from: 'working', to: 'pending_handling' });
    await sessions.emit('cs_b', 'session.state_changed', { from: 'working', to: 'pending_handling' });
    const [round] = await waitFor(() => (svc.listRounds().length ? svc.listRounds() : undefined), { what: 'a round' });
    // Then its prompt quotes both, and after a restart the same prompt is rebuilt from the journal
    expect(round.prompt).toContain('  - w1, its last turn result:\n    ```worker-data\n    merged the fix\n    ```');
    expect(round.prompt).toContain('  - w2, the last lines of its output (its last turn reported no result)');
    expect(round.prompt).toContain('    error: missing semicolon');
    svc.stop();
    sessions.outputs.clear();
    await boot();
    expect(svc.getRound(round.id).prompt).toBe(round.prompt);
  });

  it('rebuilds from the journal after a restart, and merges an interrupted round into the next one', async () => {
    await svc.enable({ task_hint: 'keep going', max_turns: 9 }, 'user', 'test');
    await sessions.emit('cs_a', 'session.asked_human', { question: 'Q1' });
    await waitFor(() => inFlight().length === 1, { what: 'a round in flight' });
    svc.stop();
    await boot();
    expect(svc.status().autonomous).toMatchObject({ enabled: true, task_hint: 'keep going', max_turns: 9, turns_used: 1 });
    const rounds = await waitFor(() => (svc.listRounds().length === 2 ? svc.listRounds() : undefined), { what: 'the round after restore' });
    expect(rounds[1].status).toBe('interrupted');
    expect(rounds[0].reasons.map((r) => [r.session_id, r.message])).toEqual([['cs_a', 'Q1']]);
  });

  it('closes with max_turns on restore when the interrupted round was the last turn', async () => {
    await svc.enable({ max_turns: 1 }, 'user', 'test');
    await sessions.emit('cs_a', 'session.asked_human', { question: 'Q1' });
    await waitFor(() => inFlight().length === 1, { what: 'the only round in flight' });
    svc.stop();
    await boot();
    expect(svc.status().autonomous).toMatchObject({ enabled: false, turns_used: 1, closed_reason: 'max_turns', round_in_flight: null });
    expect(svc.listRounds().map((r) => r.status)).toEqual(['interrupted']);
  });

  it('comes back disabled when no supervised worker survived the restart', async () => {
    await svc.enable({}, 'user', 'test');
    svc.stop();
    for (const s of sessions.sessions) s.recoverable = false;
    await boot();
    expect(svc.status().autonomous).toMatchObject({ enabled: false, closed_reason: 'no_recoverable_worker' });
  });

  it('refuses the commands of its own logic once its own clock says the lease ran out: the deadline passes, and no timeout is journaled', async () => {
    // Given a leader whose round is in flight
    svc.stop();
    let held: LeaseState = { role: 'leader', term: 1, until: Infinity };
    const lease: SupervisorLease = { holder: 'local', state: () => held, changes$: new BehaviorSubject(held).asObservable(), start: async () => undefined, stop: async () => undefined };
    await boot({ round_timeout_s: 1 }, undefined, lease);
    await svc.enable({}, 'user', 'test');
    await sessions.emit('cs_a', 'session.blocked', { reason: 'x' });
    const [round] = await waitFor(() => (inFlight().length ? inFlight() : undefined), { what: 'a round in flight' });
    const logs = CapturedLogger.capture();
    try {
      // When its lease runs out by its own clock, before the change is told
      held = { role: 'follower', holder: 'other', term: 2 };
      // Then the timeout at the deadline is refused as not_supervisor, and the round stays in flight as the journal has it
      const error = await waitFor(() => logs.messages('error', 'supervision').find((m) => m.startsWith(`round ${round.id}: `)), { what: 'the refused timeout' });
      expect(error).toBe(`round ${round.id}: its deadline passed, but recording the timeout failed: time_out_round: this node does not hold the supervisor lease`);
      expect(svc.getRound(round.id).status).toBe('in_flight');
      expect((await journal.readStream(SUPERVISION_STREAM)).map((e) => e.type)).toEqual(['supervision.enabled', 'round.started']);
    } finally {
      logs.release();
    }
  });

  describe('a scope with the enable, in one append', () => {
    /** The stream's events as [type, data], and the seqs the scope, the enable and the exclusion landed at. */
    const stream = async (name: string) => (await journal.readStream(name)).map((e) => ({ seq: e.seq, type: e.type, data: e.data, actor: e.meta.actor }));

    it('given sessions that do not move, enable with a scope is decided once, and the scope, the enable and the exclusion are one append', async () => {
      const writes = jest.spyOn(sessions, 'exclusionWrite');
      await svc.enable({ task_hint: 'ship', scope_mode: 'except', scope_session_ids: ['cs_b'] }, 'user', 'alice');
      expect(writes.mock.calls).toEqual([['cs_b', true, 'alice']]);
      const [scope, enabled] = await stream(SUPERVISION_STREAM);
      const [excluded] = await stream('session-cs_b');
      expect([scope.type, enabled.type, excluded]).toEqual([
        'supervision.scope_set',
        'supervision.enabled',
        { seq: enabled.seq + 1, type: 'session.exclusion_changed', data: { at: expect.any(Number), excluded: true }, actor: 'alice' },
      ]);
      expect(svc.status().autonomous).toMatchObject({ enabled: true, scope: { mode: 'except', excluded: ['cs_b'] } });
    });

    it('given a session stream that moves between the decision and the append, then the enable is decided again, and both writes land together after it', async () => {
      const real = sessions.exclusionWrite.bind(sessions);
      const writes = jest.spyOn(sessions, 'exclusionWrite').mockImplementation((id, excluded, actor) => {
        // The worker reports as the scope is decided: its event reaches the journal first.
        if (writes.mock.calls.length === 1) void sessions.emit(id, 'session.progress', { status: 'working' });
        return real(id, excluded, actor);
      });
      await svc.enable({ scope_mode: 'except', scope_session_ids: ['cs_b'] }, 'user', 'alice');
      // Decided again until the directory has the stream's new version (its apply step may land after the first retry).
      expect(writes.mock.calls.length).toBeGreaterThanOrEqual(2);
      const [scope, enabled] = await stream(SUPERVISION_STREAM);
      expect((await stream('session-cs_b')).map((e) => [e.seq, e.type])).toEqual([
        [scope.seq - 1, 'session.progress'],
        [enabled.seq + 1, 'session.exclusion_changed'],
      ]);
      expect(sessions.get('cs_b')?.excluded).toBe(true);
    });

    it('given a session stream another writer keeps ahead of the directory, then the conflict is answered and neither write lands', async () => {
      // Appended behind the directory's back: every decision names a version the stream has left.
      await journal.append('session-cs_b', [{ type: 'session.progress', data: { status: 'working' } }]);
      await expect(svc.enable({ scope_mode: 'except', scope_session_ids: ['cs_b'] }, 'user', 'alice')).rejects.toMatchObject({ code: 'journal_conflict' });
      expect(await journal.readStream(SUPERVISION_STREAM)).toEqual([]);
      expect((await stream('session-cs_b')).map((e) => e.type)).toEqual(['session.progress']);
      expect([svc.status(), sessions.get('cs_b')?.excluded]).toEqual([{ autonomous: null }, false]);
    });

    it('given scope set over REST or a tool, then its exclusions land in the same append as the scope, also when the rule stays as it was', async () => {
      await svc.setScope('except', ['cs_a'], 'rest');
      await svc.setScope('except', ['cs_b'], 'rest');
      const scopes = (await stream(SUPERVISION_STREAM)).map((e) => [e.seq, e.data]);
      expect(scopes).toEqual([
        [1, { mode: 'except' }],
        [3, { mode: 'except' }],
      ]);
      // The first scope excludes cs_a; the second includes cs_a again and excludes cs_b: each right after its scope.
      expect((await stream('session-cs_a')).map((e) => [e.seq, e.data])).toEqual([
        [2, expect.objectContaining({ excluded: true })],
        [4, expect.objectContaining({ excluded: false })],
      ]);
      expect((await stream('session-cs_b')).map((e) => e.seq)).toEqual([5]);
    });
  });

  describe('stall watchdog', () => {
    const watchdog = { stall_watchdog_interval_s: 1, stall_threshold_s: 1, stall_cooldown_s: 3600, stall_watchdog_startup_delay_s: 0 };

    it('wakes the brain for a session waiting past the threshold, and a restart neither re-fires early nor forgets the cooldown', async () => {
      svc.stop();
      sessions.sessions[1].state = 'pending_authorization';
      sessions.sessions[1].state_since = sessions.sessions[1].attention_since = Date.now() - 5000;
      await boot({ watchdog });
      await svc.enable({}, 'user', 'test');
      // Switched on with w2 waiting: the first round names it; the stall wakes the same round or the next.
      const stalled = await waitFor(
        async () => {
          const found = svc.listRounds().find((r) => r.reasons.some((x) => x.trigger === 'stall'));
          for (const open of found ? [] : inFlight()) await svc.completeRound(open.id);
          return found;
        },
        { what: 'a stall round' },
      );
      expect(stalled.reasons.filter((x) => x.trigger === 'stall')).toEqual([
        { session_id: 'cs_b', alias: 'w2', trigger: 'stall', state: 'pending_authorization', message: expect.stringMatching(/^waiting \d+s in pending_authorization$/) },
      ]);
      expect(svc.listRounds().at(-1)?.reasons[0]).toMatchObject({ session_id: 'cs_b', trigger: 'pending_authorization', since: new Date(sessions.sessions[1].state_since).toISOString() });
      svc.stop();
      await boot({ watchdog });
      expect(await svc.scanStalls()).toEqual([]);
      sessions.sessions[2].state = 'pending_decision';
      sessions.sessions[2].state_since = Date.now() - 5000;
      expect((await svc.scanStalls()).map((s) => [s.session_id, s.kind])).toEqual([['cs_c', 'pending_decision']]);
    });

    it('ignores excluded sessions and does nothing while supervision is off', async () => {
      svc.stop();
      await boot({ watchdog });
      sessions.sessions[0].state = 'pending_decision';
      sessions.sessions[0].state_since = Date.now() - 5000;
      expect(await svc.scanStalls()).toEqual([]);
      await svc.enable({ scope_mode: 'except', scope_session_ids: ['cs_a'] }, 'user', 'test');
      expect(await svc.scanStalls()).toEqual([]);
    });
  });
});
