import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { journalContract } from './journal.contract';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { tempDir } from '../support/temp-dir';

journalContract('LevelDB', async () => {
  const dir = tempDir('brainstem-journal-');
  return { open: (options) => openLevelJournal(dir.path, options), cleanup: async () => dir.remove() };
});

describe('LevelDB journal: the head witness file', () => {
  const witnessSeq = (dir: string) => {
    const m = /^(\d{16}) /.exec(readFileSync(join(dir, 'HEAD'), 'utf8'));
    return m ? Number(m[1]) : 0;
  };

  it('never runs ahead of the acknowledged head while appends run, and equals it once closed', async () => {
    const dir = tempDir('brainstem-witness-');
    const journal = await openLevelJournal(dir.path);
    try {
      let acknowledged = 0;
      const appenders = Array.from({ length: 16 }, async (_, w) => {
        for (let i = 0; i < 40; i++) {
          const res = await journal.append(`s-${w}`, [{ type: 'x.y', data: { i } }]);
          acknowledged = Math.max(acknowledged, res.events[0].seq);
          if (existsSync(join(dir.path, 'HEAD'))) expect(witnessSeq(dir.path)).toBeLessThanOrEqual(journal.head().seq);
        }
      });
      await Promise.all(appenders);
      expect(acknowledged).toBe(640);
      await journal.close();
      expect(witnessSeq(dir.path)).toBe(640);
    } finally {
      dir.remove();
    }
  });
});
