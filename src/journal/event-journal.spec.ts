import { journalContract } from '../../test/journal/journal.contract';
import { EventJournal } from './event-journal';
import { MemoryStorage } from './memory.storage';

journalContract('in-memory', async () => {
  const storage = new MemoryStorage();
  return { open: (options) => EventJournal.open(storage, options), cleanup: async () => undefined };
});
