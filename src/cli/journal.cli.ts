import { EventJournal } from '../journal/event-journal';
import { LevelStorage } from '../journal/level.storage';
import { JournalError, JournalEvent } from '../journal/journal.port';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

const USAGE = `usage: brainstem journal <verify|replay|tail> --dir <journal dir> [-n N]
  verify   check the whole hash chain, seq and version contiguity (exit 1 on a break)
  replay   print every event as a timeline (verifying as it reads)
  tail     print the last N events (default 20)`;

function option(args: readonly string[], ...names: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    for (const n of names) {
      if (args[i] === n) return args[i + 1];
      if (args[i].startsWith(n + '=')) return args[i].slice(n.length + 1);
    }
  }
  return undefined;
}

/** One readable line per event: seq, time, stream@version, type, data (shortened). */
export function formatEvent(e: JournalEvent): string {
  const data = JSON.stringify(e.data);
  const shown = data.length > 120 ? data.slice(0, 117) + '...' : data;
  return `${String(e.seq).padStart(8)}  ${e.at}  ${`${e.stream}@${e.version}`.padEnd(32)}  ${e.type.padEnd(28)}  ${shown}`;
}

/** `brainstem journal …` on a stopped journal. Returns the exit code. */
export async function journalCli(args: readonly string[], io: CliIo): Promise<number> {
  const command = args[0];
  const dir = option(args, '--dir', '-d');
  if (!command || !['verify', 'replay', 'tail'].includes(command) || !dir) {
    io.err(USAGE);
    return 2;
  }
  const n = Number(option(args, '-n', '--lines') ?? 20);
  if (!Number.isInteger(n) || n < 1) {
    io.err('-n: expected a positive integer');
    return 2;
  }
  let journal: EventJournal;
  try {
    journal = await EventJournal.open(new LevelStorage(dir, { sync: true }), { verifyOnOpen: 'none' });
  } catch (e) {
    io.err(`brainstem: ${(e as Error).message}`);
    return e instanceof JournalError && e.code === 'journal_locked' ? 3 : 1;
  }
  try {
    const head = journal.head();
    if (command === 'verify') {
      const r = await journal.verify();
      if (r.ok) io.out(`ok: ${r.checked} events verified; head seq ${r.head_seq}, hash ${r.head_hash}`);
      else io.err(`BROKEN at seq ${r.first_bad_seq}: ${r.error} (${r.checked} events verified before it; head seq ${r.head_seq})`);
      return r.ok ? 0 : 1;
    }
    let after = command === 'tail' ? Math.max(0, head.seq - n) : 0;
    for (;;) {
      const page = await journal.readAll(after, 1000);
      page.forEach((e) => io.out(formatEvent(e)));
      if (page.length === 0) break;
      after = page[page.length - 1].seq;
    }
    io.out(`-- head seq ${head.seq}`);
    return 0;
  } catch (e) {
    io.err(`brainstem: ${(e as Error).message}`);
    return 1;
  } finally {
    await journal.close();
  }
}
