import { EventJournal } from './event-journal';
import { FollowedStream } from './followed-stream';
import { JournalEvent } from './journal.port';
import { MemoryStorage } from './memory.storage';

type Added = { type: 'counter.added'; data: { by: number } };
const evolve = (n: number, e: JournalEvent): number => (e.type === 'counter.added' ? n + (e.data as Added['data']).by : n);
const add = (by: number) => () => ({ events: [{ type: 'counter.added', data: { by } } as Added] });

// Following another writer's appends needs a shared journal: test/cluster/confirmations-follow.int-spec.ts runs it on PostgreSQL.
describe('FollowedStream: a stream held in memory, read and commanded', () => {
  let journal: EventJournal;
  beforeEach(async () => {
    journal = await EventJournal.open(new MemoryStorage());
  });
  afterEach(() => journal.close());

  it('given events in the journal, when started, then it folds them and is at their version', async () => {
    await journal.append('counter', [{ type: 'counter.added', data: { by: 2 } }, { type: 'counter.added', data: { by: 3 } }]);
    await journal.append('other', [{ type: 'counter.added', data: { by: 100 } }]);
    const stream = new FollowedStream(journal, 'counter', 0, evolve);
    await stream.start();
    expect([stream.state, stream.version]).toEqual([5, 2]);
  });

  it('given a command, then it is decided on the state and appended at the version; started again, it reads the same', async () => {
    const stream = new FollowedStream(journal, 'counter', 0, evolve);
    await stream.start();
    await stream.handle(add(4));
    await stream.handle(add(1));
    expect([stream.state, stream.version]).toEqual([5, 2]);
    expect((await journal.readStream('counter')).map((e) => e.version)).toEqual([1, 2]);
    await stream.start();
    expect([stream.state, stream.version]).toEqual([5, 2]);
  });
});
