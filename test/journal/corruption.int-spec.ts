import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openLevelJournal } from '../../src/journal/journal.factory';
import { JournalCorruptError } from '../../src/journal/journal.port';
import { editStoredEvent, segmentKeyHolding, tamper } from '../support/stored-events';
import { tempDir } from '../support/temp-dir';

const BIN = resolve(__dirname, '../../bin/brainstem.js');

async function writeEvents(dir: string, count: number, checkpointEvery = 4096): Promise<void> {
  const journal = await openLevelJournal(dir, { checkpointEvery });
  for (let i = 1; i <= count; i++) await journal.append(`s${i % 3}`, [{ type: 'test.event', data: { i, text: `event number ${i}` } }]);
  await journal.close();
}

/** Flips one byte inside the event's body, keeping the stored value the same length. */
function flipByte(dir: string, seq: number): Promise<void> {
  return editStoredEvent(dir, seq, (v) => {
    const at = v.indexOf(`event number ${seq}"`) + 6;
    return v.slice(0, at) + (v[at] === 'X' ? 'Y' : 'X') + v.slice(at + 1);
  });
}

function cliVerify(dir: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [BIN, 'journal', 'verify', '--dir', dir], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('corruption is noticed', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir('brainstem-corrupt-')));
  afterEach(() => dir.remove());

  it('given one flipped byte inside an event, open refuses naming the seq, and the CLI verify agrees', async () => {
    await writeEvents(dir.path, 30);
    await flipByte(dir.path, 12);
    await expect(openLevelJournal(dir.path)).rejects.toThrow(/corrupt at seq 12\b/);
    await expect(openLevelJournal(dir.path)).rejects.toBeInstanceOf(JournalCorruptError);
    const cli = cliVerify(dir.path);
    expect(cli.status).toBe(1);
    expect(cli.out).toContain('BROKEN at seq 12');
  });

  it('given a deleted event key in the middle, open refuses naming the missing seq', async () => {
    await writeEvents(dir.path, 30);
    await tamper(dir.path, async (db) => db.del(await segmentKeyHolding(db, 17)));
    await expect(openLevelJournal(dir.path)).rejects.toThrow(/corrupt at seq 17\b/);
    expect(cliVerify(dir.path).out).toContain('BROKEN at seq 17');
  });

  it('given the last event deleted, open refuses because the head names it', async () => {
    await writeEvents(dir.path, 30);
    await tamper(dir.path, async (db) => db.del(await segmentKeyHolding(db, 30)));
    await expect(openLevelJournal(dir.path)).rejects.toThrow(/corrupt at seq 30\b/);
  });

  it('given the head record and its witness moved back two events, open refuses at the first event past them, and the CLI verify agrees', async () => {
    await writeEvents(dir.path, 30);
    const journal = await openLevelJournal(dir.path);
    const [event28] = await journal.readAll(27, 1);
    await journal.close();
    await tamper(dir.path, (db) => db.put('m!head', JSON.stringify({ seq: 28, hash: event28.hash })));
    writeFileSync(join(dir.path, 'HEAD'), `${String(28).padStart(16, '0')} ${event28.hash}\n`);
    await expect(openLevelJournal(dir.path)).rejects.toThrow(/corrupt at seq 29: event beyond the recorded head 28/);
    const cli = cliVerify(dir.path);
    expect(cli.status).toBe(1);
    expect(cli.out).toContain('BROKEN at seq 29');
  });

  it('given damage before the last checkpoint, boot skips it but verify and reads of that event report it', async () => {
    await writeEvents(dir.path, 30, 10);
    await flipByte(dir.path, 3);
    const journal = await openLevelJournal(dir.path, { checkpointEvery: 10 });
    try {
      expect(await journal.verify()).toMatchObject({ ok: false, first_bad_seq: 3 });
      await expect(journal.readStream('s0')).rejects.toThrow(/corrupt at seq 3\b/);
      await expect(journal.readAll(0, 10)).rejects.toThrow(/corrupt at seq 3\b/);
    } finally {
      await journal.close();
    }
    expect(cliVerify(dir.path).out).toContain('BROKEN at seq 3');
  });

  it('given an altered snapshot, loading it fails', async () => {
    const journal = await openLevelJournal(dir.path);
    await journal.append('snap', [{ type: 'test.event', data: { i: 1 } }]);
    await journal.saveSnapshot('snap', { version: 1, state: { total: 1 } });
    await journal.close();
    await tamper(dir.path, async (db) => {
      const v = (await db.get('n!snap'))!;
      await db.put('n!snap', v.replace('"total":1', '"total":9'));
    });
    const reopened = await openLevelJournal(dir.path);
    try {
      await expect(reopened.loadSnapshot('snap')).rejects.toThrow(/snapshot of snap was altered/);
    } finally {
      await reopened.close();
    }
  });

  it('given one flipped byte in the LevelDB log file, LevelDB drops the record silently but open refuses', async () => {
    await writeEvents(dir.path, 40);
    const db = join(dir.path, 'db');
    const log = readdirSync(db).find((f) => f.endsWith('.log'))!;
    const bytes = readFileSync(join(db, log));
    const at = bytes.indexOf('event number 20"');
    expect(at).toBeGreaterThan(0);
    bytes[at + 3] ^= 0x01;
    writeFileSync(join(db, log), bytes);
    await expect(openLevelJournal(dir.path)).rejects.toThrow(/corrupt at seq 20\b.*acknowledged/);
    expect(cliVerify(dir.path).out).toContain('BROKEN at seq 20');
  });

  it('says plainly when the journal is locked by a running server', async () => {
    const journal = await openLevelJournal(dir.path);
    try {
      const cli = cliVerify(dir.path);
      expect(cli.status).toBe(3);
      expect(cli.out).toMatch(/locked by another process/);
    } finally {
      await journal.close();
    }
  });
});

describe('journal CLI on bad arguments', () => {
  const dir = tempDir('brainstem-cli-bad-');
  afterAll(() => dir.remove());
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, 'journal', ...args], { encoding: 'utf8' });
    return { status: r.status, out: r.stdout + r.stderr };
  };

  it('refuses a dir with no journal instead of creating one, and says whether the dir exists', () => {
    const missing = join(dir.path, 'typo');
    expect(cli('verify', '--dir', missing)).toEqual({ status: 1, out: `brainstem: no journal at ${missing} (no such directory)\n` });
    expect(existsSync(missing)).toBe(false);
    expect(cli('verify', '--dir', dir.path)).toEqual({ status: 1, out: `brainstem: no journal at ${dir.path}\n` });
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it.each([
    [['verify', '--dir', '/x', '--bogus'], 'unknown argument --bogus'],
    [['tail', '--dir', '/x', '-n'], '-n: a value is required'],
    [['tail', '--dir', '/x', '-n', '0'], '-n: expected a positive integer'],
    [['verify'], '--dir or --url is required'],
    [['verify', '--dir', '/x', '--url', 'postgres://db/j'], '--dir and --url: give one'],
    [['verify', '--url', 'mysql://db/j'], '--url: expected a postgres:// or postgresql:// URL'],
    [['verfy', '--dir', '/x'], 'unknown command verfy'],
  ])('refuses %j with usage, exit 2', (args, message) => {
    const r = cli(...args);
    expect(r.status).toBe(2);
    expect(r.out).toContain(`brainstem journal: ${message}`);
    expect(r.out).toContain('usage: brainstem journal');
  });
});

describe('journal CLI on a healthy journal', () => {
  const dir = tempDir('brainstem-cli-');
  beforeAll(() => writeEvents(dir.path, 25));
  afterAll(() => dir.remove());

  it('verifies, replays a readable timeline and tails', () => {
    const verify = cliVerify(dir.path);
    expect(verify.status).toBe(0);
    expect(verify.out).toMatch(/^ok: 25 events verified; head seq 25/);
    const replay = spawnSync(process.execPath, [BIN, 'journal', 'replay', '--dir', dir.path], { encoding: 'utf8' });
    const lines = replay.stdout.trim().split('\n');
    expect(lines).toHaveLength(26);
    expect(lines[0]).toMatch(/^\s*1\s+\S+Z\s+s1@1\s+test\.event\s+\{"i":1,"text":"event number 1"\}$/);
    const tail = spawnSync(process.execPath, [BIN, 'journal', 'tail', '--dir', dir.path, '-n', '3'], { encoding: 'utf8' });
    expect(tail.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/)[0])).toEqual(['23', '24', '25', '--']);
  });

  it('given a reader that goes away early (| head -1), then replay stops quietly with status 0', async () => {
    // More than a pipe buffer holds, so the CLI is still writing when head exits.
    const big = tempDir('brainstem-cli-big-');
    const journal = await openLevelJournal(big.path, { sync: false });
    for (let b = 0; b < 40; b++) await journal.append('s', Array.from({ length: 100 }, (_, i) => ({ type: 'test.event', data: { i: b * 100 + i, text: 'x'.repeat(100) } })));
    await journal.close();
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" journal replay --dir "${big.path}" | head -1; echo "status \${PIPESTATUS[0]}" >&2`], { encoding: 'utf8' });
    big.remove();
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toBe('status 0\n');
  });

  it('prints usage and exits 2 on bad arguments', () => {
    const r = spawnSync(process.execPath, [BIN, 'journal', 'explode'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('usage: brainstem journal');
  });
});
