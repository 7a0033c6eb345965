import { join } from 'node:path';
import { Subscription } from 'rxjs';
import { EventBus } from '../../src/bus/event-bus';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { Journal } from '../../src/journal/journal.port';
import { SessionActor } from '../../src/sessions/session.actor';
import { FileSessionEnvStore } from '../../src/sessions/session-env.store';
import { SessionRegistry } from '../../src/sessions/session.registry';
import { SessionStore, sessionStore } from '../support/session-store';
import { tempDir } from '../support/temp-dir';

/** What a subscriber saw in the registry while handling one event. */
interface Seen {
  type: string;
  session: string;
  version: number;
  /** The session's stream version and state in the registry at that moment; null when the registry did not have it. */
  registry: { version: number; state: string } | null;
  to?: unknown;
}

describe('the bus publishes an event only after its emitter applied it (real LevelDB)', () => {
  let dir: ReturnType<typeof tempDir>;
  let journal: Journal;
  let bus: EventBus;
  let store: SessionStore;
  let registry: SessionRegistry;
  let sub: Subscription;
  const seen: Seen[] = [];

  beforeEach(async () => {
    dir = tempDir('brainstem-publish-');
    journal = await openLevelJournal(join(dir.path, 'journal'));
    bus = new EventBus(journal);
    store = sessionStore(journal, new FileSessionEnvStore(join(dir.path, 'session-env')));
    registry = store.registry;
    await registry.load();
    seen.length = 0;
    // The subscriber reads the session directory inside its handler.
    sub = bus.events$.subscribe((e) => {
      if (!e.stream.startsWith('session-')) return;
      const session = e.stream.slice('session-'.length);
      const actor = registry.find(session);
      seen.push({
        type: e.type,
        session,
        version: e.version,
        registry: actor ? { version: actor.version, state: actor.state } : null,
        ...(e.type === 'session.state_changed' && { to: (e.data as { to: unknown }).to }),
      });
    });
  });

  afterEach(async () => {
    sub.unsubscribe();
    await registry.close();
    await journal.close();
    dir.remove();
  });

  const create = (id: string) => store.create({ id, cwd: dir.path });
  const exit = (a: SessionActor) => a.run(() => store.commands.execute(a, { type: 'report_exit', code: 0, signal: null, spawn_failed: false }));

  it('given a session created, started, ending a turn and exiting, then on every event the registry already holds the state that event describes', async () => {
    const actor = await create('cs_publishorder');
    await store.start(actor);
    await actor.run(() => store.commands.execute(actor, { type: 'report_turn_ended', result: 'done', superseded: false }));
    await exit(actor);

    expect(seen.map((s) => [s.type, s.to ?? null])).toEqual([
      ['session.created', null],
      ['session.started', null],
      ['session.state_changed', 'working'],
      ['session.turn_ended', null],
      ['session.state_changed', 'pending_handling'],
      ['session.exited', null],
      ['session.state_changed', 'exited'],
    ]);
    for (const s of seen) {
      // The session is in the directory on its creation, at a version at least the event's.
      expect(s.registry).not.toBeNull();
      expect(s.registry!.version).toBeGreaterThanOrEqual(s.version);
    }
    // A state change is seen with the session in the state it names (the signal appended with it, too).
    expect(seen.filter((s) => s.to !== undefined).map((s) => s.registry!.state)).toEqual(['working', 'pending_handling', 'exited']);
    expect(seen.find((s) => s.type === 'session.exited')!.registry!.state).toBe('exited');
  });

  it('given two sessions exiting in one group commit, then each exit is published with both already exited in the registry', async () => {
    const actors = await Promise.all(['cs_groupexit1', 'cs_groupexit2'].map(create));
    await Promise.all(actors.map((a) => store.start(a)));
    seen.length = 0;
    const live: number[] = [];
    const counting = bus.ofType('session.exited').subscribe(() => live.push(registry.list().filter((a) => a.live).length));
    try {
      await Promise.all(actors.map(exit));
    } finally {
      counting.unsubscribe();
    }
    // Committed together (consecutive seqs, one group): the registry applied both before either was published.
    expect(live).toEqual([0, 0]);
  });
});
