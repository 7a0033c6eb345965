import { join } from 'node:path';
import { EventBus } from '../../src/bus/event-bus';
import { NodeDirectory } from '../../src/cluster/node-directory.port';
import { EventJournal } from '../../src/journal/event-journal';
import { JournalConflictError } from '../../src/journal/journal.port';
import { openPgJournal } from '../../src/journal/journal.factory';
import { FileSessionEnvStore } from '../../src/sessions/session-env.store';
import { SessionEvent } from '../../src/sessions/session.events';
import { SessionRegistry } from '../../src/sessions/session.registry';
import { PgCluster, PgDatabase, startPgCluster, pgDescribe } from '../support/pg-cluster';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';

const describePg = pgDescribe('session-follow.int-spec');

const everyoneUp = (self: string): NodeDirectory => ({ self, isUp: () => true, refresh: () => Promise.resolve() });

interface Node {
  journal: EventJournal;
  bus: EventBus;
  registry: SessionRegistry;
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
    const registry = new SessionRegistry(journal, bus, new FileSessionEnvStore(join(dir.path, id)), { nodes: everyoneUp(id) });
    const node: Node = { journal, bus, registry, effects: [] };
    registry.onForeignEvent((actor, event) => node.effects.push({ session: actor.id, type: event.type }));
    await registry.load();
    nodes.push(node);
    return node;
  };
  const create = (n: Node, id: string) =>
    n.registry.create({ id, title: id, runtime: 'command', profile_id: null, cwd: dir.path, command: null, args: [], env: {}, excluded: false, created_at: 1, node: n.registry.nodes.self });

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
    const apply = (event: SessionEvent) => actor.run(() => a.registry.apply(actor, event));
    await apply({ type: 'session.started', at: 2, pid: null, pid_start_time: null, idle: false });
    await apply({ type: 'session.turn_ended', at: 3, result: 'done' });
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

  it("when b, behind, appends to a's session, then it conflicts holding a's event by then; decided again it succeeds, and a is handed b's event for its effect", async () => {
    const [a, b] = [await start('a'), await start('b', false)];
    const onA = await create(a, 'cs_own');
    await b.registry.catchUp();
    const onB = b.registry.get('cs_own');
    expect([onB.version, onB.state]).toEqual([1, 'starting']);
    await onA.run(() => a.registry.apply(onA, { type: 'session.started', at: 2, pid: null, pid_start_time: null, idle: false }));
    // b has not read a's start: its append at version 1 finds the head moved, reads a's events, and conflicts.
    // (An exclusion: taken in every state, so the stale state accepts it too and the conflict is the journal's.)
    const exclude: SessionEvent = { type: 'session.exclusion_changed', at: 3, excluded: true };
    await expect(onB.run(() => b.registry.apply(onB, exclude))).rejects.toBeInstanceOf(JournalConflictError);
    expect([onB.version, onB.state, onB.context.excluded]).toEqual([3, 'working', false]);
    const message: SessionEvent = { type: 'session.message_dispatched', at: 4, text: 'hi' };
    expect(await onB.run(() => b.registry.apply(onB, message))).toBe(true);
    await waitFor(() => a.effects.length === 1, { what: "a to be handed b's message" });
    expect(a.effects).toEqual([{ session: 'cs_own', type: 'session.message_dispatched' }]);
    expect([onA.version, onA.state]).toEqual([onB.version, 'working']);
    expect(b.effects).toEqual([]);
  });
});
