import { EventBus } from '../../src/bus/event-bus';
import { soleNode } from '../../src/cluster/node-directory.port';
import { LeaseState } from '../../src/cluster/lease.rules';
import { PgLeaseStore } from '../../src/cluster/pg-lease.store';
import { SUPERVISOR_LEASE_NAME } from '../../src/cluster/supervisor-lease.port';
import { EventJournal } from '../../src/journal/event-journal';
import { openPgJournal } from '../../src/journal/journal.factory';
import { SUPERVISION_STREAM, SupervisionService } from '../../src/supervision/supervision.service';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { MemorySessionDirectory } from '../support/memory-session-directory';
import { fixedLease } from '../support/fixed-lease';
import { waitFor } from '../support/wait-for';

const describePg = pgDescribe('supervision-follow.int-spec');

let n = 0;
const ids = () => String(++n).padStart(6, '0');

describePg('supervision on two nodes sharing a journal, in process', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  const journals: EventJournal[] = [];
  const services: SupervisionService[] = [];
  beforeAll(async () => {
    cluster = await startPgCluster();
  });
  afterAll(() => cluster?.stop());
  beforeEach(async () => {
    db = await cluster.createDatabase();
    // a holds the lease in the database, term 1, for the whole test: its fenced appends commit.
    const bootstrap = await openPgJournal(db.url);
    await bootstrap.close();
    const store = new PgLeaseStore(db.url, 10_000);
    await store.claim(SUPERVISOR_LEASE_NAME, 'a', 600_000);
    await store.close();
  });
  afterEach(async () => {
    for (const s of services.splice(0)) s.stop();
    for (const j of journals.splice(0)) await j.close();
    await db.drop();
  });

  /** A node: its journal (following the others' commits, or not), its sessions, and its supervision as leader or follower. */
  const node = async (id: string, state: LeaseState, follow = true) => {
    const journal = await openPgJournal(db.url, { follow });
    journals.push(journal);
    const bus = new EventBus(journal);
    const sessions = new MemorySessionDirectory(journal);
    sessions.add(`cs_${id}`);
    const svc = new SupervisionService(bus, journal, sessions, { debounce_ms: 30, restore_ttl_s: 900, round_timeout_s: 600 }, Date.now, ids, undefined, {
      lease: fixedLease(id, state),
      nodes: soleNode(id),
    });
    await svc.start();
    services.push(svc);
    return { journal, svc, sessions };
  };

  it('given a follower that has not seen the leader s last change, when it takes a user command, then it catches up, decides again and appends after it', async () => {
    const a = await node('a', { role: 'leader', term: 1, until: Infinity });
    // b does not follow notices: its state stays where its boot left it until a conflict makes it catch up.
    const b = await node('b', { role: 'follower', holder: 'a', term: 1 }, false);
    await a.svc.enable({ task_hint: 'first', max_turns: 5 }, 'user', 'rest');
    await a.svc.setScope('except', ['cs_a'], 'rest');
    expect(b.svc.status().autonomous).toBeNull();

    const result = await b.svc.setScope('only', ['cs_b'], 'rest');
    expect(result.mode).toBe('only');
    const stream = await b.journal.readStream(SUPERVISION_STREAM);
    expect(stream.map((e) => [e.version, e.type])).toEqual([
      [1, 'supervision.enabled'],
      [2, 'supervision.scope_set'],
      [3, 'supervision.scope_set'],
    ]);
    // Caught up: b's reads now show what a did.
    expect(b.svc.status().autonomous).toMatchObject({ enabled: true, task_hint: 'first', max_turns: 5, scope: { mode: 'only' } });
    await waitFor(() => a.svc.status().autonomous?.scope.mode === 'only', { what: 'a to follow b' });
  });

  it('given /supervise taken by a follower, then the leader runs its round at once, with the goal', async () => {
    const a = await node('a', { role: 'leader', term: 1, until: Infinity });
    const b = await node('b', { role: 'follower', holder: 'a', term: 1 });
    await b.svc.supervise('tidy the repo', 'rest');
    expect(b.svc.listRounds()).toEqual([]);
    const round = await waitFor(() => a.svc.listRounds()[0], { what: 'the round on a' });
    expect(round.reasons.map((r) => [r.trigger, r.message])).toEqual([['initial', 'tidy the repo']]);
    await waitFor(() => b.svc.status().autonomous?.round_in_flight === round.id, { what: 'b to follow the round' });
  });

  it('given a follower, when a session event would wake the brain, then only the leader starts a round, and the follower shows it', async () => {
    const a = await node('a', { role: 'leader', term: 1, until: Infinity });
    const b = await node('b', { role: 'follower', holder: 'a', term: 1 });
    await b.svc.setAutonomous({ enabled: true, max_turns: 5 }, 'rest');
    await waitFor(() => a.svc.isOn(), { what: 'a to follow the enable' });
    await b.sessions.emit('cs_b', 'session.blocked', { reason: 'on b' });
    await a.sessions.emit('cs_a', 'session.blocked', { reason: 'on a' });
    const round = await waitFor(() => a.svc.listRounds()[0], { what: 'a round on a' });
    await waitFor(() => b.svc.listRounds()[0]?.id === round.id, { what: 'b to follow the round' });
    expect(round.reasons.map((r) => r.session_id)).toEqual(['cs_a']);
    const started = (await a.journal.readStream(SUPERVISION_STREAM)).filter((e) => e.type === 'round.started');
    expect(started).toHaveLength(1);
  });
});
