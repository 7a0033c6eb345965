import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { EventJournal } from '../../src/journal/event-journal';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { tempDir } from '../support/temp-dir';

/** A full disk is a small tmpfs mounted for the test: that takes root. */
const asRoot = process.getuid?.() === 0;
if (!asRoot) console.warn('level-full-disk.int-spec: not root, so no tmpfs can be mounted: skipped');
const describeRoot = asRoot ? describe : describe.skip;

/** Fills the file system holding `dir` to its last byte. */
function fill(dir: string): string {
  const filler = join(dir, 'filler');
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    closeSync(fd);
  }
  // The last bytes: a write smaller than a chunk may still fit.
  const tail = openSync(join(dir, 'filler-tail'), 'w');
  try {
    for (;;) writeSync(tail, Buffer.alloc(512));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    closeSync(tail);
  }
  return filler;
}

describeRoot('LevelDB journal on a full disk', () => {
  const dir = tempDir('brainstem-full-disk-');
  let mount: string;
  let journal: EventJournal | null = null;

  beforeEach(() => {
    mount = join(dir.path, 'fs');
    mkdirSync(mount, { recursive: true });
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mount], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`mount failed: ${r.stderr}`);
  });
  afterEach(async () => {
    await journal?.close().catch(() => undefined);
    journal = null;
    spawnSync('umount', [mount]);
    dir.remove();
  });

  const event = (i: number) => ({ type: 'x.y', data: { i, pad: 'p'.repeat(200) } });
  /** Appends one at a time: the seqs and numbers of those acknowledged, and the errors of those refused. */
  const appendEach = async (j: EventJournal, numbers: number[]) => {
    const acknowledged: Array<{ seq: number; i: number }> = [];
    const errors: Array<Error & { code?: string }> = [];
    for (const i of numbers) {
      try {
        acknowledged.push({ seq: (await j.append('s', [event(i)])).events[0].seq, i });
      } catch (e) {
        errors.push(e as Error);
      }
    }
    return { acknowledged, errors };
  };
  const range = (from: number, count: number) => Array.from({ length: count }, (_, k) => from + k);

  it('given the disk full, when events are appended, then those that do not fit are refused as journal_unavailable, and the head is the last acknowledged', async () => {
    journal = await openLevelJournal(join(mount, 'journal'));
    await appendEach(journal, range(0, 20));
    fill(mount);
    // The log's last page may still take a few: the rest are refused.
    const full = await appendEach(journal, range(1000, 100));
    expect(full.errors.length).toBeGreaterThan(0);
    expect(full.errors.map((e) => e.code)).toEqual(full.errors.map(() => 'journal_unavailable'));
    expect(full.errors[0].message).toMatch(/no space left on device/i);
    expect(journal.head().seq).toBe(20 + full.acknowledged.length);
  });

  it('given the disk was full and space came back, when events are appended, then they are acknowledged and every acknowledged event, only those, is there once the journal is opened again', async () => {
    const at = join(mount, 'journal');
    journal = await openLevelJournal(at);
    const before = await appendEach(journal, range(0, 20));
    const filler = fill(mount);
    const full = await appendEach(journal, range(1000, 100));
    expect(full.errors.length).toBeGreaterThan(0);
    rmSync(filler);
    rmSync(join(mount, 'filler-tail'));
    const after = await appendEach(journal, range(2000, 20));
    expect(after.errors).toEqual([]);
    await journal.close();

    journal = await openLevelJournal(at);
    const acknowledged = [...before.acknowledged, ...full.acknowledged, ...after.acknowledged];
    expect(await journal.verify()).toMatchObject({ ok: true, head_seq: acknowledged.length });
    const events = await journal.readAll(0, 1000);
    expect(events.map((e) => [e.seq, (e.data as { i: number }).i])).toEqual(acknowledged.map((a) => [a.seq, a.i]));
  });
});
