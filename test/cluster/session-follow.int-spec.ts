import { join } from 'node:path';
import { EventBus } from '../../src/bus/event-bus';
import { NodeDirectory } from '../../src/cluster/node-directory.port';
import { EventJournal } from '../../src/journal/event-journal';
import { openPgJournal } from '../../src/journal/journal.factory';
import { FileSessionEnvStore } from '../../src/sessions/session-env.store';
import { SessionRegistry } from '../../src/sessions/session.registry';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { SessionStore, sessionStore } from '../support/session-store';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';

const describePg = pgDescribe('session-follow.int-spec');

const everyoneUp = (self: string): NodeDirectory => ({ self, isUp: () => true, refresh: () => Promise.resolve(), roundFollowers: () => new Map(), reportRoundListeners: () => undefined });

interface Node {
  journal: EventJournal;
  bus: EventBus;
  registry: SessionRegistry;
  store: SessionStore;
  /** Events other nodes appended to this node's sessions, as the registry handed them over for their effect. */
  effects: Array<{ session: string; type: string }>;
}

describePg("session registries of two nodes on one PostgreSQL journal follow each other's sessions", () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  let dir: ReturnType<typeof tempDir>;
  const nodes: Node[] = [];

  /** follow false: the node reads the others' events only when it appends or catches up (no LISTEN). */
  const start = async (id: string, follow = true): Promise<Node> => {
    const journal = await openPgJournal(db.url, { follow });
    const bus = new EventBus(journal);
    const store = sessionStore(journal, new FileSessionEnvStore(join(dir.path, id)), { nodes: everyoneUp(id) });
    const registry = store.registry;
    const node: Node = { journal, bus, registry, store, effects: [] };
    registry.onForeignEvent((actor, event) => node.effects.push({ session: actor.id, type: event.type }));
    await registry.load();
    nodes.push(node);
    return node;
  };
  const create = (n: Node, id: string) => n.store.create({ id, title: id, cwd: dir.path });

  beforeAll(async () => {
    cluster = await startPgCluster();
  });
  afterAll(() => cluster?.stop());
  beforeEach(async () => {
    db = await cluster.createDatabase();
    dir = tempDir('brainstem-follow-');
  });
  afterEach(async () => {
    for (const n of nodes.splice(0)) {
      await n.registry.close();
      await n.journal.close();
    }
    await db.drop();
    dir.remove();
  });

  it('given both creating sessions at once, then aliases are numbered once across the nodes and each node holds every session with its owner', async () => {
    const [a, b] = [await start('a'), await start('b')];
    await Promise.all(Array.from({ length: 10 }, (_, i) => [create(a, `cs_a${i}`), create(b, `cs_b${i}`)]).flat());
    for (const n of [a, b]) {
      await waitFor(() => n.registry.list().length === 20, { what: 'each node to hold the 20 sessions' });
      const owners = Object.fromEntries(n.registry.list().map((s) => [s.id, s.context.node]));
      for (let i = 0; i < 10; i++) expect([owners[`cs_a${i}`], owners[`cs_b${i}`]]).toEqual(['a', 'b']);
      expect(n.registry.list().map((s) => s.context.alias).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `w${i + 1}`).sort());
    }
  });

  it("when a appends to its session, then b's bus publishes each event only once b's registry holds it, and no effect is handed to b (not its session)", async () => {
    const [a, b] = [await start('a'), await start('b')];
    const seenOnB: Array<{ type: string; version: number; held: number | null; state: string | null }> = [];
    b.bus.events$.subscribe((e) => {
      if (e.stream !== 'session-cs_a') return;
      const actor = b.registry.find('cs_a');
      seenOnB.push({ type: e.type, version: e.version, held: actor?.version ?? null, state: actor?.state ?? null });
    });
    const actor = await create(a, 'cs_a');
    await a.store.start(actor);
    await actor.run(() => a.store.commands.execute(actor, { type: 'report_turn_ended', result: 'done', superseded: false }));
    await waitFor(() => seenOnB.length === 5, { what: 'b to publish the five events' });
    expect(seenOnB.map((s) => [s.type, s.version])).toEqual([
      ['session.created', 1],
      ['session.started', 2],
      ['session.state_changed', 3],
      ['session.turn_ended', 4],
      ['session.state_changed', 5],
    ]);
    for (const s of seenOnB) expect(s.held).toBe(s.version);
    expect(seenOnB[seenOnB.length - 1].state).toBe('pending_handling');
    expect(b.registry.find('cs_a')?.context.last_result).toBe('done');
    expect(b.effects).toEqual([]);
  });

  it("when b, behind, commands a's session, then its append conflicts, it catches up with a's events and decides again on them, and a is handed b's event for its effect", async () => {
    const [a, b] = [await start('a'), await start('b', false)];
    const onA = await create(a, 'cs_own');
    await b.registry.catchUp();
    const onB = b.registry.get('cs_own');
    expect([onB.version, onB.state]).toEqual([1, 'starting']);
    await a.store.start(onA);
    // b has not read a's start: it decides the message on a session still starting (refused there), catches up with
    // a's events, and decides again on the working session.
    expect([onB.version, onB.state]).toEqual([1, 'starting']);
    await onB.run(() => b.store.commands.execute(onB, { type: 'dispatch_message', text: 'hi', worker: 'ready' }));
    expect([onB.version, onB.state]).toEqual([4, 'working']);
    await onA.run(() => a.store.commands.execute(onA, { type: 'report_turn_ended', result: null, superseded: false }));
    // b has not read the turn's end: an exclusion is taken in every state, so the stale state accepts it, its append at
    // version 4 conflicts, and it is decided again at 6.
    expect(onB.version).toBe(4);
    await onB.run(() => b.store.commands.execute(onB, { type: 'set_excluded', excluded: true }));
    const types = (await b.journal.readStream('session-cs_own')).map((e) => `${e.type}@${e.version}`);
    expect(types).toEqual([
      'session.created@1',
      'session.started@2',
      'session.state_changed@3',
      'session.message_dispatched@4',
      'session.turn_ended@5',
      'session.state_changed@6',
      'session.exclusion_changed@7',
    ]);
    await waitFor(() => a.effects.length === 2, { what: "a to be handed b's two events" });
    expect(a.effects).toEqual([
      { session: 'cs_own', type: 'session.message_dispatched' },
      { session: 'cs_own', type: 'session.exclusion_changed' },
    ]);
    expect([onA.version, onA.state, onA.context.excluded]).toEqual([onB.version, 'pending_handling', true]);
    expect(b.effects).toEqual([]);
  });

});
