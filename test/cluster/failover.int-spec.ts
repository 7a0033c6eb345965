import { join } from 'node:path';
import { openPgJournal } from '../../src/journal/journal.factory';
import { JournalEvent } from '../../src/journal/journal.port';
import { pgDescribe } from '../support/pg-cluster';
import { usePgNodes } from '../support/pg-nodes';
import { ServiceProcess, callService } from '../support/service-process';
import { openSse } from '../support/sse';
import { waitFor } from '../support/wait-for';
import { WORKERS } from '../support/workers';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const describePg = pgDescribe('failover.int-spec');

/** Generous: the machine is shared and slow; the lease TTL is 2 s. */
const LONG = 60_000;
/** What a takeover's own work may take beyond the lease's expiry and the debounce: the claim, catching up, restoring, the round's append. */
const TAKEOVER_WORK_MS = 500;

/**
 * Nodes are real service processes on one database, with a 2 s lease TTL and the stream driver: the test is the brain,
 * completing rounds over REST. Sessions are started on the node they run on (each node's registry knows its own).
 */
describePg('supervision failover between nodes sharing a PostgreSQL journal', () => {
  const t = usePgNodes('brainstem-failover-');
  const boot = (id: string, env: Record<string, string> = {}) => t.boot(id, { BRAINSTEM_NODE_LEASE_TTL_S: '2', BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '100', ...env });
  const call = (svc: ServiceProcess, method: string, path: string, body?: object): Promise<Json> => callService<Json>(svc, method, path, body);
  const startWorker = async (svc: ServiceProcess) => {
    const s = await call(svc, 'POST', '/coding-sessions', { cwd: t.dir.path, command: process.execPath, args: [join(WORKERS, 'quiet.js')] });
    t.reaper.track(s.pid);
    return s;
  };
  const signal = (svc: ServiceProcess, id: string, question: string) => call(svc, 'POST', `/coding-sessions/${id}/signals`, { type: 'ask_human', question });
  const rounds = async (svc: ServiceProcess) => (await call(svc, 'GET', '/session-os/main-brain/rounds')).rounds as Json[];
  const autonomous = async (svc: ServiceProcess) => (await call(svc, 'GET', '/session-os/main-brain/autonomous')).autonomous as Json;
  const lease = async () => (await t.db.sql('SELECT holder, term::int AS term FROM brainstem_leases')).at(0) as { holder: string; term: number } | undefined;
  const holderIs = (ids: string[], term: number) =>
    waitFor(async () => {
      const l = await lease();
      return l && ids.includes(l.holder) && l.term === term && l;
    }, { timeoutMs: LONG, what: `the lease held by ${ids.join(' or ')} in term ${term}` });
  /** The round in flight on this node, once there is one other than those named. */
  const newRound = (svc: ServiceProcess, not: string[]) =>
    waitFor(async () => (await rounds(svc)).find((r) => r.status === 'in_flight' && !not.includes(r.id)), { timeoutMs: LONG, what: 'a new round in flight' });
  /** The whole journal, read and its chain verified by a journal of its own. */
  const journalEvents = async (): Promise<JournalEvent[]> => {
    const j = await openPgJournal(t.db.url);
    try {
      expect((await j.verify()).ok).toBe(true);
      return await j.readAll(0, 1_000_000);
    } finally {
      await j.close();
    }
  };
  const supervisionEvents = (all: JournalEvent[]) => all.filter((e) => e.stream === 'supervision');
  /** Acknowledged rounds are in the journal once each, and the supervision stream's versions have no gap or repeat. */
  const expectNothingLostOrDoubled = (all: JournalEvent[], acknowledgedRounds: string[]) => {
    const sup = supervisionEvents(all);
    expect(sup.map((e) => e.version)).toEqual(sup.map((_, i) => i + 1));
    const started = sup.filter((e) => e.type === 'round.started').map((e) => (e.data as Json).round.id as string);
    expect(new Set(started).size).toBe(started.length);
    for (const id of acknowledgedRounds) expect(started).toContain(id);
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
  };

  it('given three nodes, when the leader is killed (-9) during a round, then another takes the lease and rounds flow there with the same turns, cap, goal and scope', async () => {
    const a = await boot('a');
    expect(await holderIs(['a'], 1)).toEqual({ holder: 'a', term: 1 });
    const b = await boot('b');
    const c = await boot('c');
    const wa = await startWorker(a);
    const spare = await startWorker(a);
    const wb = await startWorker(b);
    const wc = await startWorker(c);
    // Each node's readiness says where it stands on the lease.
    expect((await call(a, 'GET', '/ready')).lease).toEqual({ node: 'a', role: 'leader', term: 1 });
    expect((await call(b, 'GET', '/ready')).lease).toEqual({ node: 'b', role: 'follower', term: 1 });

    // Commands taken by followers: decided against their followed state, appended; the leader reacts.
    await call(b, 'POST', '/session-os/main-brain/autonomous', { enabled: true, task_hint: 'keep shipping', max_turns: 10 });
    await call(a, 'POST', '/coding-sessions/supervision-scope', { mode: 'except', session_ids: [spare.id] });
    await waitFor(async () => (await autonomous(c))?.scope.mode === 'except' && (await autonomous(a))?.enabled, { timeoutMs: LONG, what: 'every node to follow the enable and the scope' });

    await signal(a, wa.id, 'first?');
    const r1 = await newRound(a, []);
    // The brain completes a round through a follower: the leader folds it and the next round can start.
    await call(c, 'POST', `/session-os/main-brain/rounds/${r1.id}/complete`, { summary: 'one' });
    await signal(a, wa.id, 'second?');
    const r2 = await newRound(a, [r1.id]);
    const before = await autonomous(a);
    expect(before).toMatchObject({ enabled: true, turns_used: 2, max_turns: 10, task_hint: 'keep shipping', round_in_flight: r2.id, scope: { mode: 'except' } });
    await waitFor(async () => (await autonomous(b))?.round_in_flight === r2.id, { timeoutMs: LONG, what: 'b to follow round 2' });

    a.child.kill('SIGKILL');
    await a.exited;
    const taken = await holderIs(['b', 'c'], 2);
    const leader = taken.holder === 'b' ? b : c;
    const other = taken.holder === 'b' ? c : b;
    const leaderWorker = taken.holder === 'b' ? wb : wc;
    const otherId = taken.holder === 'b' ? 'c' : 'b';
    await waitFor(async () => (await call(leader, 'GET', '/ready')).lease.role === 'leader', { timeoutMs: LONG, what: 'the new leader to know it leads' });
    expect((await call(leader, 'GET', '/ready')).lease).toEqual({ node: taken.holder, role: 'leader', term: 2 });
    await waitFor(async () => (await call(other, 'GET', '/ready')).lease.term === 2, { timeoutMs: LONG, what: 'the other node to know the new term' });
    expect((await call(other, 'GET', '/ready')).lease).toEqual({ node: otherId, role: 'follower', term: 2 });

    // The round in flight ends as a restart ends it (interrupted), and its reasons wake the next round on the new leader.
    const r3 = await newRound(leader, [r1.id, r2.id]);
    expect(r3.reasons.map((r: Json) => [r.session_id, r.message])).toEqual([[wa.id, 'second?']]);
    expect((await rounds(leader)).find((r) => r.id === r2.id)).toMatchObject({ status: 'interrupted' });
    expect(await autonomous(leader)).toMatchObject({ enabled: true, turns_used: 3, max_turns: 10, task_hint: 'keep shipping', round_in_flight: r3.id, scope: { mode: 'except' } });

    // Rounds keep flowing there: completed, and the next trigger starts the next.
    await call(leader, 'POST', `/session-os/main-brain/rounds/${r3.id}/complete`, { summary: 'three' });
    await signal(leader, leaderWorker.id, 'fourth?');
    const r4 = await newRound(leader, [r1.id, r2.id, r3.id]);
    expect(await autonomous(leader)).toMatchObject({ turns_used: 4, round_in_flight: r4.id });
    // The follower's reads follow.
    await waitFor(async () => (await autonomous(other))?.round_in_flight === r4.id, { timeoutMs: LONG, what: 'the follower to follow round 4' });

    expectNothingLostOrDoubled(await journalEvents(), [r1.id, r2.id, r3.id, r4.id]);
  });

  it('given triggers at the kill (-9) of the leader, one in its debounce and one in the leaderless window, then the new leader\'s first round names both, within the lease TTL plus the debounce', async () => {
    // A debounce long enough that the trigger sent just before the kill is still waiting in the old leader's window.
    const env = { BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '1000' };
    const a = await boot('a', env);
    await holderIs(['a'], 1);
    const b = await boot('b', env);
    const [w1, w2] = [await startWorker(b), await startWorker(b)];
    await call(a, 'POST', '/session-os/main-brain/autonomous', { enabled: true });
    await waitFor(async () => (await autonomous(b))?.enabled, { timeoutMs: LONG, what: 'b to follow the enable' });
    const turnEnded = (w: Json, result: string) => call(b, 'POST', `/coding-sessions/${w.id}/signals`, { type: 'turn_ended', result });

    // w1's turn ends: journaled, and waiting in a's debounce when a is killed.
    expect(await turnEnded(w1, 'w1 done')).toMatchObject({ state: 'pending_handling' });
    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    await a.exited;
    // w2's turn ends while no node leads.
    expect(await turnEnded(w2, 'w2 done')).toMatchObject({ state: 'pending_handling' });

    await holderIs(['b'], 2);
    const [round] = await waitFor(async () => {
      const all = await rounds(b);
      return all.length ? all : undefined;
    }, { timeoutMs: LONG, what: "the new leader's first round" });
    expect(round.reasons.map((r: Json) => [r.session_id, r.trigger, r.message])).toEqual([
      [w1.id, 'pending_handling', 'w1 done'],
      [w2.id, 'pending_handling', 'w2 done'],
    ]);
    // The lease runs out at most its TTL after the last renewal (before the kill), the new leader claims it as it runs
    // out, then waits out the debounce: TTL + debounce, and what the takeover itself takes (the claim, catching up,
    // restoring, journaling the round) on a loaded machine.
    const took = Date.parse(round.started_at) - killedAt;
    expect(took).toBeLessThanOrEqual(2000 + 1000 + TAKEOVER_WORK_MS);
    // a never started a round: the one in the journal is b's.
    const started = supervisionEvents(await journalEvents()).filter((e) => e.type === 'round.started');
    expect(started.map((e) => (e.data as Json).round.id)).toEqual([round.id]);
    expect((await autonomous(b)).pending).toEqual([]);
  });

  it('given a round started at switch-on for a session already waiting, when its leader is killed (-9) with no brain following, then the new leader interrupts it at once (leader_lost) and a session there gets a round', async () => {
    const a = await boot('a');
    await holderIs(['a'], 1);
    const b = await boot('b');
    const wa = await startWorker(a);
    const wb = await startWorker(b);
    await signal(a, wa.id, 'which database?');
    await call(a, 'POST', '/session-os/main-brain/autonomous', { enabled: true });
    const r1 = await newRound(a, []);
    expect(r1).toMatchObject({ status: 'in_flight', reasons: [expect.objectContaining({ session_id: wa.id })] });
    await waitFor(async () => (await autonomous(b))?.round_in_flight === r1.id, { timeoutMs: LONG, what: 'b to follow round 1' });

    a.child.kill('SIGKILL');
    await a.exited;
    await holderIs(['b'], 2);
    // Round 1 is a's, and nobody follows the rounds stream anywhere: no one drives it, so b ends it as it takes over.
    await waitFor(async () => (await autonomous(b))?.round_in_flight !== r1.id, { timeoutMs: LONG, what: "b to end a's round" });
    expect((await rounds(b)).find((r) => r.id === r1.id)).toMatchObject({ status: 'interrupted', interruption: 'leader_lost' });
    expect(await call(b, 'POST', `/coding-sessions/${wb.id}/signals`, { type: 'turn_ended', result: 'wb done' })).toMatchObject({ state: 'pending_handling' });
    const r2 = await newRound(b, [r1.id]);
    // The question round 1 never got answered for is named again, beside b's worker (merged, or in the round before).
    const named = (await rounds(b)).filter((r) => r.id !== r1.id).flatMap((r) => r.reasons.map((x: Json) => x.session_id));
    expect(new Set(named)).toEqual(new Set([wa.id, wb.id]));
    expect(r2.status).toBe('in_flight');
    const interrupted = supervisionEvents(await journalEvents()).filter((e) => e.type === 'round.interrupted');
    expect(interrupted.map((e) => e.data)).toEqual([expect.objectContaining({ round_id: r1.id, reason: 'leader_lost' })]);
  });

  it('given a brain following the rounds stream on a live node, when the leader that started its round is killed (-9), then the round is kept for that brain, which completes it through that node, and rounds go on', async () => {
    const a = await boot('a');
    await holderIs(['a'], 1);
    const b = await boot('b');
    const wa = await startWorker(a);
    const wb = await startWorker(b);
    // The brain the user brings follows the rounds on b.
    const stream = await openSse(`${b.url}/api/v1/session-os/main-brain/rounds/stream`, b.auth);
    try {
      await waitFor(async () => (await call(b, 'GET', '/session-os/main-brain/presence')).presence.listeners === 1, { timeoutMs: LONG, what: 'b to count the follower' });
      await call(a, 'POST', '/session-os/main-brain/autonomous', { enabled: true });
      await signal(a, wa.id, 'which database?');
      const r1 = await newRound(a, []);
      // Where the stream started, then the round, with who runs it and how it reaches the brain.
      const [, seen] = await stream.take(2, LONG);
      expect([seen.event, JSON.parse(seen.data).data.round]).toEqual(['round.started', expect.objectContaining({ id: r1.id, node: 'a', term: 1, driver: 'stream' })]);

      a.child.kill('SIGKILL');
      await a.exited;
      await holderIs(['b'], 2);
      await waitFor(async () => (await call(b, 'GET', '/ready')).lease.role === 'leader', { timeoutMs: LONG, what: 'b to know it leads' });
      // b led long enough to have decided on round 1: a turn ended on b now waits behind it, not beside it.
      expect(await call(b, 'POST', `/coding-sessions/${wb.id}/signals`, { type: 'turn_ended', result: 'wb done' })).toMatchObject({ state: 'pending_handling' });
      await waitFor(() => /supervising as the lease holder \(term 2\)/.test(b.output()), { timeoutMs: LONG, what: 'b to take over supervision' });
      expect(await autonomous(b)).toMatchObject({ round_in_flight: r1.id });
      expect((await rounds(b)).map((r) => [r.id, r.status])).toEqual([[r1.id, 'in_flight']]);

      await call(b, 'POST', `/session-os/main-brain/rounds/${r1.id}/complete`, { summary: 'answered a' });
      const r2 = await newRound(b, [r1.id]);
      expect(r2.reasons.map((r: Json) => r.session_id)).toEqual([wb.id]);
      const sup = supervisionEvents(await journalEvents());
      expect(sup.some((e) => e.type === 'round.interrupted')).toBe(false);
    } finally {
      stream.close();
    }
  });

  it('given a leader stopped (SIGSTOP) past its lease, when it is continued, then it appends no supervision event in its old term and follows the new leader', async () => {
    // The stopped node's rounds time out after 2 s, the other's never in this test: a timeout in the journal would be the stale node's.
    const a = await boot('a', { BRAINSTEM_MAIN_BRAIN_ROUND_TIMEOUT_S: '2' });
    await holderIs(['a'], 1);
    const b = await boot('b', { BRAINSTEM_MAIN_BRAIN_ROUND_TIMEOUT_S: '3600' });
    const wa = await startWorker(a);
    const wb = await startWorker(b);
    await call(a, 'POST', '/session-os/main-brain/autonomous', { enabled: true, max_turns: 20 });
    await signal(a, wa.id, 'first?');
    const r1 = await newRound(a, []);
    a.child.kill('SIGSTOP');

    await holderIs(['b'], 2);
    const r2 = await newRound(b, [r1.id]);
    a.child.kill('SIGCONT');
    // Its round deadline and its lease have both passed: it must notice it lost the lease, not time the round out.
    await waitFor(() => /no longer the supervisor lease holder|ran out without a renewal/.test(a.output()), { timeoutMs: LONG, what: 'a to notice it lost the lease' });
    await signal(a, wa.id, 'to a stale leader?');
    await call(b, 'POST', `/session-os/main-brain/rounds/${r2.id}/complete`, {});
    await signal(b, wb.id, 'next?');
    const r3 = await newRound(b, [r1.id, r2.id]);
    // a follows: its reads show b's rounds.
    await waitFor(async () => (await autonomous(a))?.round_in_flight === r3.id, { timeoutMs: LONG, what: 'a to follow round 3' });
    expect(await lease()).toEqual({ holder: 'b', term: 2 });

    const all = await journalEvents();
    const sup = supervisionEvents(all);
    const after = sup.slice(sup.findIndex((e) => e.type === 'round.started' && (e.data as Json).round.id === r1.id) + 1);
    // Everything after a's last round is b's doing: r1 interrupted by its takeover, its rounds, their completion.
    expect(all.some((e) => e.type === 'round.timed_out')).toBe(false);
    expect(after.map((e) => e.type)).toEqual(['round.interrupted', 'round.started', 'round.completed', 'round.started']);
    expect(after.filter((e) => e.type === 'round.started').map((e) => (e.data as Json).round.id)).toEqual([r2.id, r3.id]);
    expectNothingLostOrDoubled(all, [r1.id, r2.id, r3.id]);
    expect(a.child.exitCode).toBeNull();
  });
});
