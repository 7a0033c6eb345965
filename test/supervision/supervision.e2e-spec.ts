import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Journal, JournalError } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { CapturedLogger } from '../support/captured-logger';
import { openSse, readSse } from '../support/sse';
import { supervisionCalls } from '../support/supervision-calls';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { WorkerReaper } from '../support/workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('autonomous supervision over HTTP with real command workers', () => {
  const reaper = new WorkerReaper();
  const t = useTestApp({ BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '200' }, { listen: true, each: true, beforeClose: () => reaper.killAll() });

  const { req, startWorker } = supervisionCalls(() => t, reaper);
  const rounds = async () => (await req('GET', '/session-os/main-brain/rounds')).body.rounds as Json[];
  const inFlight = async () => (await rounds()).filter((r) => r.status === 'in_flight');
  const signal = (id: string, body: Json) => req('POST', `/coding-sessions/${id}/signals`, body);


  it('answers null before supervision was ever enabled, and validates POST autonomous', async () => {
    expect((await req('GET', '/session-os/main-brain/autonomous')).body).toEqual({ autonomous: null });
    for (const bad of [
      {},
      { enabled: 'yes' },
      { enabled: true, max_turns: 0 },
      { enabled: true, max_turns: 1001 },
      { enabled: true, max_turns: 2.5 },
      { enabled: true, bogus: 1 },
      { enabled: true, task_hint: null },
      { enabled: true, task_hint: 'g'.repeat(4001) },
    ]) {
      const res = await req('POST', '/session-os/main-brain/autonomous', bad);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_input');
    }
    const offWithExtras = await req('POST', '/session-os/main-brain/autonomous', { enabled: false, task_hint: 'x' });
    expect(offWithExtras.status).toBe(400);
    expect(offWithExtras.body.message).toContain('send only enabled=false');
    const on = await req('POST', '/session-os/main-brain/autonomous', { enabled: true, task_hint: 'ship', max_turns: 5 });
    expect(on.body.autonomous).toMatchObject({ enabled: true, turns_used: 0, max_turns: 5, task_hint: 'ship' });
    const off = await req('POST', '/session-os/main-brain/autonomous', { enabled: false });
    expect(off.body.autonomous).toMatchObject({ enabled: false, closed_reason: 'disabled' });
  });

  it('merges a burst of signals from 5 sessions inside the debounce window into exactly one round naming all 5', async () => {
    const workers = await Promise.all(Array.from({ length: 5 }, startWorker));
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    await Promise.all(workers.map((w) => signal(w.id, { type: 'report_progress', status: 'completed', message: `done ${w.alias}` })));
    const [round] = await waitFor(async () => ((await rounds()).length ? rounds() : undefined), { what: 'the round' });
    expect(round.reasons.map((r: Json) => r.session_id).sort()).toEqual(workers.map((w) => w.id).sort());
    expect(await rounds()).toHaveLength(1);
  });

  it('merges signals during an in-flight round into exactly one follow-up round after completion', async () => {
    const [a, b, c] = await Promise.all(Array.from({ length: 3 }, startWorker));
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    await signal(a.id, { type: 'notify_blocked', reason: 'no creds' });
    const [first] = await waitFor(async () => ((await inFlight()).length ? inFlight() : undefined), { what: 'the first round' });
    await signal(b.id, { type: 'ask_human', question: 'Which region?' });
    await signal(c.id, { type: 'report_progress', status: 'needs_review', message: 'PR ready' });
    // The worker's question is in the main chat too, for the human (ask_human wakes the brain and goes to the chat).
    const question = await waitFor(async () => ((await req('GET', '/session-os/main-brain/messages')).body.messages as Json[]).find((m) => m.kind === 'question'), { what: 'the question in the chat' });
    expect(question).toMatchObject({ role: 'worker', kind: 'question', text: 'Which region?', session_id: b.id });
    // Past the window while the round is in flight: the triggers wait, they are not lost.
    await waitFor(async () => (await req('GET', `/coding-sessions/${c.id}`)).body.last_progress, { what: 'the progress to land' });
    expect(await rounds()).toHaveLength(1);
    const done = await req('POST', `/session-os/main-brain/rounds/${first.id}/complete`, { summary: 'sent creds' });
    expect(done.body).toMatchObject({ status: 'completed', summary: 'sent creds' });
    const all = await waitFor(async () => ((await rounds()).length === 2 ? rounds() : undefined), { what: 'the follow-up round' });
    expect(all[0].reasons.map((r: Json) => r.session_id).sort()).toEqual([b.id, c.id].sort());
    expect((await req('POST', `/session-os/main-brain/rounds/${first.id}/complete`, {})).body).toMatchObject({ statusCode: 409, code: 'round_already_ended' });
    expect((await req('POST', '/session-os/main-brain/rounds/rd_missing/complete', {})).body).toMatchObject({ statusCode: 404, code: 'round_not_found' });
  });

  it('ends the round in flight as interrupted when supervision is turned off, so none stays in flight', async () => {
    const a = await startWorker();
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    await signal(a.id, { type: 'notify_blocked', reason: 'no creds' });
    const [round] = await waitFor(async () => ((await inFlight()).length ? inFlight() : undefined), { what: 'a round' });
    const off = await req('POST', '/session-os/main-brain/autonomous', { enabled: false });
    expect(off.body.autonomous).toMatchObject({ enabled: false, closed_reason: 'disabled' });
    expect((await req('GET', `/session-os/main-brain/rounds/${round.id}`)).body).toMatchObject({ status: 'interrupted', ended_at: expect.any(String) });
    const late = await req('POST', `/session-os/main-brain/rounds/${round.id}/complete`, {});
    expect(late.body).toMatchObject({ statusCode: 409, code: 'round_already_ended', message: expect.stringContaining('already interrupted') });
    expect(await inFlight()).toEqual([]);
  });

  it('streams round events to a brain that gives no cursor from the head (live only), and from after_seq when asked', async () => {
    // Given a round that started before the brain connects
    const a = await startWorker();
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    await signal(a.id, { type: 'notify_blocked', reason: 'no creds' });
    const [round] = await waitFor(async () => ((await inFlight()).length ? inFlight() : undefined), { what: 'a round' });
    // When the brain connects without a cursor; Then it gets where the stream starts, not the round.started before it
    const live = await openSse(`${t.url}/api/v1/session-os/main-brain/rounds/stream`, t.auth('main_brain'));
    const [start] = await live.take(1);
    expect(start).toEqual({ id: expect.stringMatching(/^\d+$/), data: '' });
    // And the round's completion, live
    await req('POST', `/session-os/main-brain/rounds/${round.id}/complete`, { summary: 'sent creds' });
    const [completed] = await live.take(1);
    live.close();
    expect([completed.event, JSON.parse(completed.data).data.round_id]).toEqual(['round.completed', round.id]);
    expect(Number(completed.id)).toBeGreaterThan(Number(start.id));
    // When it asks for the history with after_seq=0; Then it catches up on the round from its start
    const history = await readSse(`${t.url}/api/v1/session-os/main-brain/rounds/stream?after_seq=0`, 2, t.auth('main_brain'));
    expect(history.map((e) => [e.event, JSON.parse(e.data).data.round?.id ?? JSON.parse(e.data).data.round_id])).toEqual([
      ['round.started', round.id],
      ['round.completed', round.id],
    ]);
  });

  it('wakes the brain for a turn end with the turn\'s result as the reason\'s message, quoted once in the prompt as worker data', async () => {
    // Given supervision on over a worker
    const a = await startWorker();
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    // When its turn ends with a result
    expect((await signal(a.id, { type: 'turn_ended', result: 'All 12 tests pass.' })).status).toBe(200);
    // Then the round's reason carries it, and the prompt quotes it once, fenced as data
    const [round] = await waitFor(async () => ((await rounds()).length ? rounds() : undefined), { what: 'the round' });
    const since = (await req('GET', `/coding-sessions/${a.id}`)).body.state_since as string;
    expect(round.reasons).toEqual([{ session_id: a.id, alias: a.alias, trigger: 'pending_handling', state: 'pending_handling', message: 'All 12 tests pass.', since }]);
    expect(round.prompt).toContain(`  ${a.alias} (${a.id}) pending_handling since ${since.slice(11, 19)}`);
    expect(round.prompt).toContain(`  - ${a.alias} (${a.id}) finished its turn and waits for handling (待处理); its turn result:\n    \`\`\`worker-data\n    All 12 tests pass.\n    \`\`\``);
    expect(round.prompt.split('All 12 tests pass.')).toHaveLength(2);
  });

  it('given a session already waiting, when supervision is switched on, then a round naming it starts within the debounce plus 1 s, by the service\'s own timestamps', async () => {
    // Given a worker waiting in 待拍板 before supervision is on
    const a = await startWorker();
    const [b] = [await startWorker()];
    expect((await signal(a.id, { type: 'ask_human', question: 'Which region?' })).body).toMatchObject({ state: 'pending_decision' });
    const since = (await req('GET', `/coding-sessions/${a.id}`)).body.state_since as string;
    // When the switch turns it on; Then it is pending (waiting, no round has named it yet)
    const on = await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    expect(on.body.autonomous.pending).toEqual([{ session_id: a.id, alias: a.alias, state: 'pending_decision', trigger: 'ask_human', since }]);
    // And a round names it, with why and since when, and the working worker not at all
    const [round] = await waitFor(async () => ((await rounds()).length ? rounds() : undefined), { what: 'the round' });
    expect(round.reasons).toEqual([{ session_id: a.id, alias: a.alias, trigger: 'ask_human', state: 'pending_decision', message: 'Which region?', since, chat_seq: expect.any(Number) }]);
    expect(round.reasons.map((r: Json) => r.session_id)).not.toContain(b.id);
    // Within the debounce (200 ms) plus 1 s of the switch, as the journal timed both
    const enabled = (await req('GET', '/journal/events?stream=supervision&type=supervision.enabled')).body.events as Json[];
    const took = Date.parse(round.started_at) - Date.parse(enabled[0].at);
    expect(took).toBeGreaterThanOrEqual(200);
    expect(took).toBeLessThanOrEqual(200 + 1000);
    // Covered: nothing is pending any more
    expect((await req('GET', '/session-os/main-brain/autonomous')).body.autonomous.pending).toEqual([]);
  });

  it('never wakes for an excluded session', async () => {
    const [a, b] = await Promise.all([startWorker(), startWorker()]);
    const patched = await req('PATCH', `/coding-sessions/${a.id}/supervision`, { excluded: true });
    expect(patched.body).toMatchObject({ excluded: true });
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    await signal(a.id, { type: 'ask_human', question: 'ignored?' });
    await signal(b.id, { type: 'notify_blocked', reason: 'real' });
    const [round] = await waitFor(async () => ((await rounds()).length ? rounds() : undefined), { what: 'a round' });
    expect(round.reasons.map((r: Json) => r.session_id)).toEqual([b.id]);
  });

  it('closes with max_turns when turns_used reaches max_turns, with a notice in the main chat', async () => {
    const [a] = await Promise.all([startWorker(), startWorker()]);
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true, max_turns: 1 });
    await signal(a.id, { type: 'notify_blocked', reason: 'x' });
    const [round] = await waitFor(async () => ((await inFlight()).length ? inFlight() : undefined), { what: 'the round' });
    await req('POST', `/session-os/main-brain/rounds/${round.id}/complete`, {});
    const state = (await req('GET', '/session-os/main-brain/autonomous')).body.autonomous;
    expect(state).toMatchObject({ enabled: false, turns_used: 1, closed_reason: 'max_turns' });
    const messages = await waitFor(async () => {
      const m = (await req('GET', '/session-os/main-brain/messages')).body.messages as Json[];
      return m.some((x) => x.kind === 'notice') ? m : undefined;
    }, { what: 'the notice' });
    expect(messages.at(-1)).toMatchObject({ role: 'system', kind: 'notice', text: expect.stringContaining('turn cap') });
  });

  it('closes with converged and no round when the last supervised worker exits', async () => {
    const a = await startWorker();
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    await req('POST', `/coding-sessions/${a.id}/stop`);
    await waitFor(async () => (await req('GET', '/session-os/main-brain/autonomous')).body.autonomous.enabled === false, { what: 'convergence' });
    expect((await req('GET', '/session-os/main-brain/autonomous')).body.autonomous.closed_reason).toBe('converged');
    expect(await rounds()).toEqual([]);
  });

  it('/supervise with a goal over the task_hint limit is refused with 400 and posts nothing', async () => {
    const before = (await req('GET', '/session-os/main-brain/messages')).body.messages.length;
    const res = await req('POST', '/session-os/main-brain/messages', { text: `/supervise ${'g'.repeat(4001)}` });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('at most 4000 characters');
    expect((await req('GET', '/session-os/main-brain/messages')).body.messages.length).toBe(before);
    expect((await req('GET', '/session-os/main-brain/autonomous')).body.autonomous?.task_hint).not.toBe('g'.repeat(4001));
  });

  it('/supervise fix the build sets task_hint and runs one round at once', async () => {
    await startWorker();
    const res = await req('POST', '/session-os/main-brain/messages', { text: '/supervise fix the build' });
    expect(res.status).toBe(201);
    expect(res.body.autonomous).toMatchObject({ enabled: true, task_hint: 'fix the build' });
    const [round] = await waitFor(async () => ((await rounds()).length ? rounds() : undefined), { what: 'the initial round' });
    expect(round.reasons[0]).toMatchObject({ trigger: 'initial', message: 'fix the build' });
    expect(round.prompt).toContain('Goal: fix the build');
  });

  it('sets scope in bulk, refusing only/except that name no valid session and keeping the stored scope', async () => {
    const [a, b] = await Promise.all([startWorker(), startWorker()]);
    const only = await req('POST', '/coding-sessions/supervision-scope', { mode: 'only', session_ids: [a.alias] });
    expect(only.body).toMatchObject({ mode: 'only', supervised: [a.id], excluded: [b.id] });
    const bad = await req('POST', '/coding-sessions/supervision-scope', { mode: 'except', session_ids: ['w99', 'cs_nope'] });
    expect(bad.body).toMatchObject({ statusCode: 400, code: 'scope_names_no_session', message: expect.stringContaining('needs at least one valid session id') });
    expect((await req('GET', `/coding-sessions/${b.id}`)).body.excluded).toBe(true);
    const inverted = await req('POST', '/coding-sessions/supervision-scope', { mode: 'invert', session_ids: [a.id, b.id] });
    expect(inverted.body).toMatchObject({ supervised: [b.id], excluded: [a.id] });
    expect((await req('POST', '/coding-sessions/supervision-scope', { mode: 'sideways', session_ids: [] })).status).toBe(400);
  });

  it('enables with a scope in one append: the scope, the enable and each session\'s exclusion, and the session takes later commands', async () => {
    const [a, b] = await Promise.all([startWorker(), startWorker()]);
    const head = t.app.get<Journal>(JOURNAL).head().seq;
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/session-os/main-brain/tools/enable_supervision',
      payload: { task_hint: 'go', scope_mode: 'only', scope_session_ids: [a.alias] },
      headers: t.auth('main_brain'),
    });
    expect(res.statusCode).toBe(200);
    const written = (await t.app.get<Journal>(JOURNAL).readAll(head)).filter((e) => e.stream === 'supervision' || e.type === 'session.exclusion_changed');
    // Who changed the session's exclusion is the brain that set the scope.
    expect(written.map((e) => [e.seq - written[0].seq, e.stream, e.type, e.meta.actor])).toEqual([
      [0, 'supervision', 'supervision.scope_set', 'system'],
      [1, 'supervision', 'supervision.enabled', 'system'],
      [2, `session-${b.id}`, 'session.exclusion_changed', 'main_brain'],
    ]);
    expect(written[2].data).toMatchObject({ excluded: true });
    expect((await req('GET', `/coding-sessions/${b.id}`)).body.excluded).toBe(true);
    // The session adopted the version its exclusion was written at: its next command appends after it.
    expect((await signal(b.id, { type: 'report_progress', status: 'working' })).status).toBe(200);
    expect((await req('GET', `/coding-sessions/${b.id}`)).body.excluded).toBe(true);
  });

  it('shows the scope mode (the last set other than invert) in the state object and supervision_status', async () => {
    const [a, b] = await Promise.all([startWorker(), startWorker()]);
    const brainStatus = async () => (await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/supervision_status', payload: {}, headers: t.auth('main_brain') })).json().result;
    const state = async () => (await req('GET', '/session-os/main-brain/autonomous')).body.autonomous;
    // Given no scope set: all, before supervision was ever enabled too
    const before = await brainStatus();
    expect(before).toEqual({ autonomous: null, scope: { mode: 'all', include_external: false, supervised: expect.any(Array), excluded: [] } });
    expect(before.scope.supervised.sort()).toEqual([a.id, b.id].sort());
    // When the user sets only and enables supervision; Then both show it
    await req('POST', '/coding-sessions/supervision-scope', { mode: 'only', session_ids: [a.id] });
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    expect((await state()).scope).toEqual({ mode: 'only', include_external: false, supervised: [a.id], excluded: [b.id] });
    expect((await brainStatus()).autonomous.scope).toEqual({ mode: 'only', include_external: false, supervised: [a.id], excluded: [b.id] });
    // When invert flips the sessions; Then the mode stays only
    await req('POST', '/coding-sessions/supervision-scope', { mode: 'invert', session_ids: [a.id, b.id] });
    expect((await state()).scope).toEqual({ mode: 'only', include_external: false, supervised: [b.id], excluded: [a.id] });
    // When the brain sets except; Then both show except
    await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/set_supervision_scope', payload: { mode: 'except', session_ids: [b.id] }, headers: t.auth('main_brain') });
    expect((await brainStatus()).autonomous.scope).toEqual({ mode: 'except', include_external: false, supervised: [a.id], excluded: [b.id] });
    expect((await state()).scope).toMatchObject({ mode: 'except' });
  });

  it('serves the main-brain tools over REST with schemas and structured errors', async () => {
    const a = await startWorker();
    const list = (await req('GET', '/session-os/main-brain/tools')).body.tools as Json[];
    expect(list.map((x) => x.name).sort()).toEqual(
      [
        'complete_round',
        'enable_supervision',
        'finish_supervision',
        'list_sessions',
        'manage_agent_profile',
        'merge_session',
        'overlaps',
        'read_chat',
        'read_session_output',
        'release_session',
        'resume_session',
        'reply_to_human',
        'resolve_permission',
        'send_to_session',
        'session_diff',
        'set_session_budget',
        'set_supervision_scope',
        'start_session',
        'stop_session',
        'suggest_merge_order',
        'supervision_status',
        'usage_report',
      ].sort(),
    );
    expect(list.find((x) => x.name === 'set_supervision_scope')?.parameters.properties.mode.enum).toEqual(['all', 'only', 'except']);
    const enabled = await req('POST', '/session-os/main-brain/tools/enable_supervision', { task_hint: 'go', scope_mode: 'only', scope_session_ids: [a.alias] });
    expect(enabled.body.result.autonomous).toMatchObject({ enabled: true, task_hint: 'go' });
    const sessions = await req('POST', '/session-os/main-brain/tools/list_sessions', {});
    expect(sessions.body.result.sessions[0]).toMatchObject({ id: a.id, alias: a.alias, supervised: true });
    const invert = await req('POST', '/session-os/main-brain/tools/set_supervision_scope', { mode: 'invert', session_ids: [a.id] });
    expect(invert.status).toBe(400);
    expect(invert.body.message).toContain('mode');
    expect((await req('POST', '/session-os/main-brain/tools/enable_supervision', { max_turns: 'many' })).status).toBe(400);
    const idsWithoutMode = await req('POST', '/session-os/main-brain/tools/enable_supervision', { scope_session_ids: [a.alias] });
    expect(idsWithoutMode.status).toBe(400);
    expect(idsWithoutMode.body.message).toContain('scope_mode');
    expect((await req('POST', '/session-os/main-brain/tools/send_to_session', { session: 'w99', text: 'hi' })).status).toBe(404);
    expect((await req('POST', '/session-os/main-brain/tools/teleport', {})).status).toBe(404);
    const finished = await req('POST', '/session-os/main-brain/tools/finish_supervision', { summary: 'all green' });
    expect(finished.body.result.autonomous).toMatchObject({ enabled: false, closed_reason: 'finished', summary: 'all green' });
    const wrap = await waitFor(async () => ((await req('GET', '/session-os/main-brain/messages')).body.messages as Json[]).find((m) => m.kind === 'wrap_up'), {
      what: 'the wrap-up',
    });
    expect(wrap.text).toBe('all green');
    const again = await req('POST', '/session-os/main-brain/tools/finish_supervision', { summary: 'lost?' });
    expect(again.body).toMatchObject({ statusCode: 409, code: 'supervision_off', message: expect.stringContaining('closed: finished') });
  });
});

describe('supervision work nobody waits for, when the journal refuses it', () => {
  let logs: CapturedLogger;
  const reaper = new WorkerReaper();
  const t = useTestApp(
    {
      BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '20',
      BRAINSTEM_MAIN_BRAIN_ROUND_TIMEOUT_S: '3',
      BRAINSTEM_SUPERVISION_STALL_WATCHDOG_INTERVAL_S: '1',
      BRAINSTEM_SUPERVISION_STALL_WATCHDOG_STARTUP_DELAY_S: '0',
      BRAINSTEM_SUPERVISION_STALL_THRESHOLD_S: '1',
    },
    { each: true, beforeClose: () => reaper.killAll() },
  );

  const { req, startWorker } = supervisionCalls(() => t, reaper);
  /**
   * From now on the journal refuses the service's appends to the supervision stream. (A foreign write no longer makes
   * them fail: the service follows other writers' supervision events, and decides again on a conflict.)
   */
  const refuseSupervisionAppends = () => {
    const journal = t.app.get<Journal>(JOURNAL);
    const appendAll = journal.appendAll.bind(journal);
    jest.spyOn(journal, 'appendAll').mockImplementation((writes, options) =>
      writes.some((w) => w.stream === 'supervision') ? Promise.reject(new JournalError('journal_closed', 'the journal refuses supervision appends (test)')) : appendAll(writes, options),
    );
  };
  const CONFLICT = /: the journal refuses supervision appends \(test\)$/;
  /** The supervision error logged that starts with `start`. */
  const logged = (start: string) =>
    waitFor(() => logs.messages('error', 'supervision').find((m) => m.startsWith(start)), { what: `an error logged starting "${start}"` });

  beforeEach(() => {
    logs = CapturedLogger.capture();
  });
  afterEach(() => logs.release());

  it('logs a round that cannot start, a stall and a convergence close that cannot be recorded, each with its session, and keeps answering', async () => {
    // Given supervision on over a worker, and a journal that refuses the service's next appends to the supervision stream
    const a = await startWorker();
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    refuseSupervisionAppends();
    // When the worker asks the human; Then the round that would wake the brain is logged as not started, naming why
    expect((await req('POST', `/coding-sessions/${a.id}/signals`, { type: 'ask_human', question: 'Which region?' })).status).toBe(200);
    expect(await logged('a round to wake the brain for ')).toMatch(new RegExp(`^a round to wake the brain for ask_human from ${a.alias} \\(${a.id}\\)[^:]* could not start${CONFLICT.source}`));
    // And the watchdog's stall, once the worker has waited past the threshold
    expect(await logged(`stall watchdog: ${a.alias} (${a.id}) has waited `)).toMatch(new RegExp(`in pending_decision, but recording the stall failed${CONFLICT.source}`));
    // When the last supervised worker exits; Then the convergence close that fails is logged
    expect((await req('POST', `/coding-sessions/${a.id}/stop`)).status).toBe(200);
    expect(await logged(`${a.alias} (${a.id}) exited and no supervised worker is left, but closing supervision (converged) failed`)).toMatch(CONFLICT);
    // And the service keeps answering, with what it could record
    expect((await req('GET', '/health')).status).toBe(200);
    expect((await req('GET', `/coding-sessions/${a.id}`)).body).toMatchObject({ state: 'exited' });
    expect((await req('GET', '/session-os/main-brain/autonomous')).body.autonomous).toMatchObject({ enabled: true, round_in_flight: null });
  });

  it('logs a round timeout that cannot be recorded, with the round, and keeps answering', async () => {
    // Given a round in flight, then a journal that refuses the service's next appends to the supervision stream
    const a = await startWorker();
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    await req('POST', `/coding-sessions/${a.id}/signals`, { type: 'notify_blocked', reason: 'no creds' });
    const round = await waitFor(async () => (await req('GET', '/session-os/main-brain/rounds')).body.rounds[0] as Json | undefined, { what: 'a round' });
    refuseSupervisionAppends();
    // When its deadline passes; Then the timeout that cannot be journaled is logged with the round
    expect(await logged(`round ${round.id}: its deadline passed, but recording the timeout failed`)).toMatch(CONFLICT);
    // And the service keeps answering: the round is still in flight, as the journal has it
    expect((await req('GET', `/session-os/main-brain/rounds/${round.id}`)).body).toMatchObject({ status: 'in_flight' });
    expect((await req('GET', '/health')).status).toBe(200);
  });
});

describe('a round whose delivery to the brain fails, over HTTP', () => {
  let logs: CapturedLogger;
  let brain: Server;
  let url = '';
  let answer = { status: 502, body: 'bad gateway' };
  const reaper = new WorkerReaper();

  const { req, startWorker } = supervisionCalls(() => t, reaper);
  const rounds = async () => (await req('GET', '/session-os/main-brain/rounds')).body.rounds as Json[];

  beforeEach(async () => {
    brain = createServer((request, res) => {
      request.resume();
      request.on('end', () => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body));
    });
    await new Promise<void>((r) => brain.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(brain.address() as AddressInfo).port}/brain`;
  });
  const t = useTestApp(() => ({ BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '20', BRAINSTEM_MAIN_BRAIN_DRIVER: 'webhook', BRAINSTEM_MAIN_BRAIN_WEBHOOK_URL: url }), {
    listen: true,
    each: true,
    beforeClose: () => reaper.killAll(),
  });
  beforeEach(() => {
    logs = CapturedLogger.capture();
  });
  afterEach(async () => {
    logs.release();
    await new Promise((r) => brain.close(r));
  });

  it('ends it failed with the reason in the round views, the rounds stream and the log; the turn is used and the next trigger starts a round', async () => {
    // Given supervision on, and a brain whose webhook answers 502
    const [a, b] = await Promise.all([startWorker(), startWorker()]);
    await req('POST', '/session-os/main-brain/autonomous', { enabled: true });
    // When a worker wakes it
    await req('POST', `/coding-sessions/${a.id}/signals`, { type: 'notify_blocked', reason: 'no creds' });
    // Then the round ends failed, the failure apart from the summary, in the list and the round's own view
    const failure = 'delivery to the main brain failed (webhook): webhook answered 502: bad gateway';
    const [round] = await waitFor(async () => ((await rounds())[0]?.status === 'failed' ? rounds() : undefined), { what: 'the failed round' });
    expect(round).toMatchObject({ status: 'failed', failure, summary: null, ended_at: expect.any(String) });
    expect((await req('GET', `/session-os/main-brain/rounds/${round.id}`)).body).toEqual(round);
    // And the rounds stream carries round.failed with its reason
    const events = await readSse(`${t.url}/api/v1/session-os/main-brain/rounds/stream?after_seq=0`, 2, t.auth('main_brain'));
    expect(events.map((e) => [e.event, JSON.parse(e.data).data])).toEqual([
      ['round.started', expect.objectContaining({ round: expect.objectContaining({ id: round.id }) })],
      ['round.failed', { round_id: round.id, reason: failure }],
    ]);
    expect(logs.messages('warn', 'supervision')).toEqual([`round ${round.id}: ${failure}`]);
    // And the brain's status shows the turn used and no round in flight
    const status = await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/supervision_status', payload: {}, headers: t.auth('main_brain') });
    expect(status.json().result.autonomous).toMatchObject({ enabled: true, turns_used: 1, round_in_flight: null });
    // When the brain answers again and another worker wakes it; Then a new round runs and completes
    answer = { status: 200, body: JSON.stringify({ summary: 'handled' }) };
    await req('POST', `/coding-sessions/${b.id}/signals`, { type: 'notify_blocked', reason: 'no disk' });
    const [next] = await waitFor(async () => ((await rounds())[0]?.status === 'completed' ? rounds() : undefined), { what: 'the next round' });
    expect(next).toMatchObject({ summary: 'handled', failure: null, reasons: [expect.objectContaining({ session_id: b.id })] });
    expect((await req('GET', '/session-os/main-brain/autonomous')).body.autonomous).toMatchObject({ turns_used: 2 });
  });
});
