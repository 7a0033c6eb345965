import { OUTPUT_ELSEWHERE_WAIT_MS } from '../../src/supervision/round-evidence';
import { pgDescribe } from '../support/pg-cluster';
import { usePgNodes } from '../support/pg-nodes';
import { ServiceProcess, callService } from '../support/service-process';
import { waitFor } from '../support/wait-for';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const describePg = pgDescribe('supervision-evidence.int-spec');

const LONG = 60_000;
const DEBOUNCE_MS = 200;
/** Long enough that b, stopped, is still within its lease (a asks it, and it does not answer); the peer client's bound is this too. */
const LEASE_TTL_S = 10;
/** What starting a round may take beyond the debounce and the wait for b on a shared, loaded machine: far under LEASE_TTL_S. */
const SLACK_MS = 1500;

/** Prints two lines, then stays alive without writing (it outlives the service, as workers do). */
const PRINTS = "console.log('built on b');console.log('tests pass on b');process.on('SIGPIPE',()=>{});process.stdin.resume();process.stdin.on('error',()=>{});setInterval(()=>{},1000)";

/**
 * The supervisor (node a) and a node b that runs a worker, as real service processes on one PostgreSQL journal, with the
 * stream driver: the test is the brain and reads each round as the API gives it.
 */
describePg("a supervision round shows the output of a worker another node runs", () => {
  const t = usePgNodes('brainstem-evidence-');
  const boot = (id: string) => t.boot(id, { BRAINSTEM_NODE_LEASE_TTL_S: String(LEASE_TTL_S), BRAINSTEM_SUPERVISION_DEBOUNCE_MS: String(DEBOUNCE_MS) });
  const call = (svc: ServiceProcess, method: string, path: string, body?: object): Promise<Json> => callService<Json>(svc, method, path, body);
  const rounds = async (svc: ServiceProcess) => (await call(svc, 'GET', '/session-os/main-brain/rounds')).rounds as Json[];
  const newRound = (svc: ServiceProcess, not: string[]) =>
    waitFor(async () => (await rounds(svc)).find((r) => r.status === 'in_flight' && !not.includes(r.id)), { timeoutMs: LONG, what: 'a new round in flight' });

  it('given a worker on b that printed lines, then the round a starts shows them; with b stopped, it says b did not answer and starts within the bound', async () => {
    const a = await boot('a');
    await waitFor(async () => (await call(a, 'GET', '/ready')).lease?.role === 'leader', { timeoutMs: LONG, what: 'a to hold the supervisor lease' });
    const b = await boot('b');
    await waitFor(async () => ((await call(a, 'GET', '/cluster')).nodes as Json[]).filter((n) => n.url !== null).length === 2, { timeoutMs: LONG, what: 'both addresses' });
    const s = await call(b, 'POST', '/coding-sessions', { runtime: 'command', command: process.execPath, args: ['-e', PRINTS], cwd: t.dir.path, title: 'prints on b' });
    t.reaper.track(s.pid);
    expect(s.node).toBe('b');
    await waitFor(async () => ((await call(b, 'GET', `/coding-sessions/${s.id}/output`)).lines as string[]).includes('tests pass on b'), { timeoutMs: LONG, what: "b's worker to print" });
    await call(a, 'POST', '/session-os/main-brain/autonomous', { enabled: true, task_hint: 'ship it', max_turns: 10 });

    // b's worker asks the human: a wakes the brain, and its round shows what the worker printed on b.
    await call(b, 'POST', `/coding-sessions/${s.id}/signals`, { type: 'ask_human', question: 'Deploy?' });
    const r1 = await newRound(a, []);
    expect(r1.reasons.map((r: Json) => [r.session_id, r.trigger])).toContainEqual([s.id, 'ask_human']);
    expect(r1.prompt).toContain(`  - ${s.alias}, the last lines of its output (its last turn reported no result)`);
    expect(r1.prompt).toContain('    built on b\n    tests pass on b\n');
    // Journaled as it was seen: b's follower view of the round, folded from round.started, shows the same.
    await waitFor(async () => (await rounds(b)).find((r) => r.id === r1.id)?.prompt === r1.prompt, { timeoutMs: LONG, what: 'b to follow the round' });
    await call(a, 'POST', `/session-os/main-brain/rounds/${r1.id}/complete`, { summary: 'asked' });

    // b stopped (still within its lease, so a asks it): a takes the signal for b's session, and the round starts anyway.
    b.child.kill('SIGSTOP');
    await call(a, 'POST', `/coding-sessions/${s.id}/signals`, { type: 'ask_human', question: 'Deploy now?' });
    const signalled = Date.now();
    const r2 = await newRound(a, [r1.id]);
    expect(r2.prompt).toContain(`  - ${s.alias}: no turn result, and its output could not be read as the round started: the output of session ${s.alias} is kept on node b, which`);
    expect(r2.prompt).toMatch(/node b, which (did not answer within 1000 ms|could not give it: node b at \S+ did not answer)/);
    expect(r2.prompt).not.toContain('no turn result and no output yet');
    // Started once the debounce and the wait for b had passed, not the peer client's bound (the lease TTL).
    expect(Date.parse(r2.started_at) - signalled).toBeLessThan(DEBOUNCE_MS + OUTPUT_ELSEWHERE_WAIT_MS + SLACK_MS);
  }, 120_000);
});
