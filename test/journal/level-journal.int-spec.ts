import { journalContract } from './journal.contract';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { tempDir } from '../support/temp-dir';

journalContract('LevelDB', async () => {
  const dir = tempDir('brainstem-journal-');
  return { open: (options) => openLevelJournal(dir.path, options), cleanup: async () => dir.remove() };
});
