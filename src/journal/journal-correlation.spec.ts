import { AsyncLocalStorage } from 'node:async_hooks';
import { filter } from 'rxjs';
import { openMemoryJournal } from './journal.factory';
import { JournalEvent } from './journal.port';

describe('correlation ids of appended events', () => {
  it('gives an event appended without one the correlation id of the work in progress, and an explicit one wins', async () => {
    // Given a journal whose work in progress is told by an async context
    const work = new AsyncLocalStorage<string>();
    const journal = await openMemoryJournal({ correlationId: () => work.getStore() ?? null });
    // When events are appended inside request r1, one of them with its own correlation id, and one outside any
    const inside = await work.run('r1', () => journal.append('s-1', [{ type: 'a.one' }, { type: 'a.two', meta: { correlation_id: 'given' } }]));
    const outside = await journal.append('s-1', [{ type: 'a.three' }]);
    // Then
    expect([...inside.events, ...outside.events].map((e) => e.meta.correlation_id)).toEqual(['r1', 'given', null]);
    await journal.close();
  });

  it('does not lend one request id to what a subscriber appends for another request’s event of the same batch', async () => {
    // Given a subscriber that appends a reaction to every request event, and two requests appending in the same tick
    const work = new AsyncLocalStorage<string>();
    const journal = await openMemoryJournal({ correlationId: () => work.getStore() ?? null });
    const reactions: Promise<unknown>[] = [];
    journal.committed$.pipe(filter((e: JournalEvent) => e.type === 'req.done')).subscribe((e) => reactions.push(journal.append('reactions', [{ type: 'reaction.seen', data: e.seq }])));
    await Promise.all([work.run('r1', () => journal.append('s-1', [{ type: 'req.done' }])), work.run('r2', () => journal.append('s-2', [{ type: 'req.done' }]))]);
    await Promise.all(reactions);
    // Then the requests' events carry their own ids, and the reactions, appended by the journal's publication, none
    const events = await journal.readAll(0);
    expect(events.map((e) => [e.type, e.meta.correlation_id])).toEqual([
      ['req.done', 'r1'],
      ['req.done', 'r2'],
      ['reaction.seen', null],
      ['reaction.seen', null],
    ]);
    await journal.close();
  });
});
