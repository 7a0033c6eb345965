import { EventBus } from '../../src/bus/event-bus';
import { soleNode } from '../../src/cluster/node-directory.port';
import { LeaseState } from '../../src/cluster/lease.rules';
import { PgLeaseStore } from '../../src/cluster/pg-lease.store';
import { SUPERVISOR_LEASE_NAME } from '../../src/cluster/supervisor-lease.port';
import { EventJournal } from '../../src/journal/event-journal';
import { openPgJournal } from '../../src/journal/journal.factory';
import { ChatService } from '../../src/main-brain/chat.service';
import { ConfirmationsService } from '../../src/main-brain/confirmations.service';
import { SupervisionService } from '../../src/supervision/supervision.service';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { MemorySessionDirectory } from '../support/memory-session-directory';
import { fixedLease } from '../support/fixed-lease';
import { waitFor } from '../support/wait-for';

const describePg = pgDescribe('confirmations-follow.int-spec');

let n = 0;
const ids = () => String(++n).padStart(6, '0');

describePg('confirmations of the human gate on two nodes sharing a journal, in process', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  const journals: EventJournal[] = [];
  const stops: Array<() => void> = [];
  beforeAll(async () => {
    cluster = await startPgCluster();
  });
  afterAll(() => cluster?.stop());
  beforeEach(async () => {
    db = await cluster.createDatabase();
    await (await openPgJournal(db.url)).close();
    const store = new PgLeaseStore(db.url, 10_000);
    await store.claim(SUPERVISOR_LEASE_NAME, 'a', 600_000);
    await store.close();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) stop();
    for (const j of journals.splice(0)) await j.close();
    await db.drop();
  });

  /** A node: journal, supervision (a leads), chat and confirmations; `ran` records the held calls it ran. */
  const node = async (id: string, state: LeaseState) => {
    const journal = await openPgJournal(db.url, { follow: true });
    journals.push(journal);
    const bus = new EventBus(journal);
    const sessions = new MemorySessionDirectory(journal);
    const supervision = new SupervisionService(bus, journal, sessions, { debounce_ms: 30, restore_ttl_s: 900, round_timeout_s: 600 }, Date.now, ids, undefined, {
      lease: fixedLease(id, state),
      nodes: soleNode(id),
    });
    await supervision.start();
    const chat = new ChatService(bus, journal, supervision, async () => undefined);
    await chat.start();
    const ran: string[] = [];
    const confirmations = new ConfirmationsService(
      journal,
      chat,
      async (tool, args) => {
        ran.push(`${tool}:${String(args.target)}`);
        return { done: true };
      },
      (tool) => tool === 'drop',
      Date.now,
      ids,
      600_000,
    );
    await confirmations.start();
    stops.push(() => confirmations.stop(), () => chat.stop(), () => supervision.stop());
    return { confirmations, ran };
  };

  it('Given a call held on one node, When the user confirms it on both nodes at once, Then the other node listed it, and it runs once', async () => {
    const a = await node('a', { role: 'leader', term: 1, until: Infinity });
    const b = await node('b', { role: 'follower', holder: 'a', term: 1 });
    const held = await a.confirmations.request({ tool: 'drop', args: { target: 'prod' }, description: 'Drop prod for good.', actor: 'main_brain' });
    await waitFor(() => b.confirmations.list('pending').some((c) => c.id === held.confirmation_id), { timeoutMs: 30_000, what: 'b to follow the held call' });

    const results = await Promise.allSettled([a.confirmations.confirm(held.confirmation_id, 'user'), b.confirmations.confirm(held.confirmation_id, 'user')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(['confirmation_already_decided']);
    expect([...a.ran, ...b.ran]).toEqual(['drop:prod']);
    await waitFor(() => a.confirmations.get(held.confirmation_id).outcome !== null && b.confirmations.get(held.confirmation_id).outcome !== null, {
      timeoutMs: 30_000,
      what: 'both nodes to hold the outcome',
    });
  });

  it('Given a held call of a tool only the supervising node runs, When confirmed on another node, Then it is refused there and stays pending', async () => {
    const a = await node('a', { role: 'leader', term: 1, until: Infinity });
    const b = await node('b', { role: 'follower', holder: 'a', term: 1 });
    const held = await a.confirmations.request({ tool: 'brain_permission', args: { request_id: 'r1' }, description: 'Let the brain run ls.', actor: 'main_brain' });
    await waitFor(() => b.confirmations.list('pending').some((c) => c.id === held.confirmation_id), { timeoutMs: 30_000, what: 'b to follow the held call' });
    await expect(b.confirmations.confirm(held.confirmation_id, 'user')).rejects.toMatchObject({ code: 'not_supervisor' });
    expect(b.confirmations.get(held.confirmation_id).status).toBe('pending');
    expect(b.ran).toEqual([]);
  });
});
