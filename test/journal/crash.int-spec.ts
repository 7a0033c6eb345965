import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';

const ROOT = resolve(__dirname, '../..');
const WRITER = resolve(__dirname, '../fixtures/journal-crash-writer.ts');

function startWriter(dir: string, tag: string): { child: ChildProcess; acked: () => number; stderr: () => string } {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', WRITER, dir, tag], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let acked = 0;
  let err = '';
  let buf = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buf += chunk;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const l of lines) if (l.startsWith('acked ')) acked = Math.max(acked, Number(l.slice(6)));
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  return { child, acked: () => acked, stderr: () => err };
}

describe('crash safety with a real writer process', () => {
  const dir = tempDir('brainstem-crash-');
  afterAll(() => dir.remove());

  it('keeps only whole batches and every acknowledged event across 10 SIGKILLs', async () => {
    let previousHead = 0;
    for (let round = 1; round <= 10; round++) {
      // Given a writer appending batches concurrently
      const w = startWriter(dir.path, `r${round}`);
      const target = previousHead + 200 + Math.floor(Math.random() * 800);
      await waitFor(() => w.acked() >= target || (w.child.exitCode !== null && new Error(w.stderr())), {
        what: `writer round ${round} to pass seq ${target}`,
        timeoutMs: 60000,
      }).then((v) => {
        if (v instanceof Error) throw v;
      });
      // When it is killed mid-run
      w.child.kill('SIGKILL');
      await new Promise((r) => w.child.once('exit', r));
      const acked = w.acked();

      // Then the journal opens (tail verified), verifies whole, and holds whole batches only
      const journal = await openLevelJournal(dir.path);
      try {
        const head = journal.head().seq;
        expect(head).toBeGreaterThanOrEqual(acked);
        expect(head).toBeGreaterThanOrEqual(previousHead);
        const report = await journal.verify();
        expect(report).toMatchObject({ ok: true, head_seq: head, checked: head });
        const sizes = new Map<string, { size: number; seen: number }>();
        for (let after = 0; after < head; ) {
          const page = await journal.readAll(after, 5000);
          for (const e of page) {
            const d = e.data as { batch: string; size: number };
            const b = sizes.get(d.batch) ?? { size: d.size, seen: 0 };
            b.seen++;
            sizes.set(d.batch, b);
          }
          after = page[page.length - 1].seq;
        }
        const partial = [...sizes].filter(([, b]) => b.seen !== b.size);
        expect(partial).toEqual([]);
        previousHead = head;
      } finally {
        await journal.close();
      }
    }
  }, 180000);
});
