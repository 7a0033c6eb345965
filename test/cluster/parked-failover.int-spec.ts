import { pgDescribe } from '../support/pg-cluster';
import { usePgNodes } from '../support/pg-nodes';
import { ServiceProcess, callService } from '../support/service-process';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN } from '../support/workers';
import { CONTINUE_TEXT } from '../../src/sessions/session-limit.model';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const describePg = pgDescribe('parked-failover.int-spec');

/** Generous: the machine is shared and slow; the lease TTL is 2 s. */
const LONG = 90_000;

/**
 * Sessions parked at their model's limit across a failover, on real service processes sharing a PostgreSQL journal
 * with fake claude workers: the deadline is a journaled timestamp, so the session of a node that lives on resumes at
 * it though the leader died, and the dead leader's own session resumes at it once its node is back as a follower.
 */
describePg('parked sessions across a failover', () => {
  const t = usePgNodes('brainstem-parked-failover-');
  const boot = (id: string) => t.boot(id, { BRAINSTEM_NODE_LEASE_TTL_S: '2' });
  const call = (svc: ServiceProcess, method: string, path: string, body?: object): Promise<Json> => callService<Json>(svc, method, path, body);
  const start = async (svc: ServiceProcess) => {
    const s = await call(svc, 'POST', '/coding-sessions', { cwd: t.dir.path, runtime: 'claude-code', env: { PATH: `${FAKE_BIN}:${process.env.PATH}` }, prompt: 'hit the rate limit for 12 s' });
    t.reaper.track(s.pid);
    return s;
  };
  const parked = (svc: ServiceProcess, id: string) =>
    waitFor(async () => (await call(svc, 'GET', `/coding-sessions/${id}`)).parked ?? undefined, { timeoutMs: LONG, what: `${id} parked` });
  /** The session's journaled facts, read through a node. */
  const facts = async (svc: ServiceProcess, id: string) => (await call(svc, 'GET', `/journal/events?stream=session-${id}&limit=500`)).events as Json[];
  const resumed = (svc: ServiceProcess, id: string) =>
    waitFor(
      async () => {
        const all = await facts(svc, id);
        const i = all.findIndex((e) => e.type === 'session.unparked');
        return i >= 0 && all.slice(i).some((e) => e.type === 'session.turn_ended') ? { unparked: all[i], next: all[i + 1] } : undefined;
      },
      { timeoutMs: LONG, what: `${id} resumed and its turn ended` },
    );

  it("given a session parked on the leader and one on a follower, when the leader is killed (-9), then the follower's resumes at its time, and the leader's once its node is back", async () => {
    const a = await boot('a');
    await waitFor(async () => (await call(a, 'GET', '/ready')).lease.role === 'leader', { timeoutMs: LONG, what: 'a to lead' });
    const b = await boot('b');
    const onA = await start(a);
    const onB = await start(b);
    const [pa, pb] = [await parked(a, onA.id), await parked(b, onB.id)];

    a.child.kill('SIGKILL');
    await a.exited;
    await waitFor(async () => (await call(b, 'GET', '/ready')).lease.role === 'leader', { timeoutMs: LONG, what: 'b to take the lease' });
    const back = await boot('a');

    for (const [svc, s, p] of [[b, onB, pb], [back, onA, pa]] as const) {
      const { unparked, next } = await resumed(svc, s.id);
      expect(unparked.data.by).toBe('timer');
      expect(unparked.data.at).toBeGreaterThanOrEqual(Date.parse(p.resumes_at));
      expect(next).toMatchObject({ type: 'session.message_dispatched', data: { text: CONTINUE_TEXT } });
    }
    expect((await call(back, 'GET', '/ready')).lease.role).toBe('follower');
  });
});
