import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EventJournal } from '../journal/event-journal';
import { openPgJournal } from '../journal/journal.factory';
import { LevelStorage } from '../journal/level.storage';
import { JournalError, JournalEvent } from '../journal/journal.port';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

const USAGE = `usage: brainstem journal <verify|replay|tail> (--dir <journal dir> | --url <postgres URL>) [-n N]
  --url    the journal in a PostgreSQL database, which may be in use meanwhile (default: BRAINSTEM_JOURNAL_URL)
  verify   check the whole hash chain, seq and version contiguity (exit 1 on a break)
  replay   print every event as a timeline (verifying as it reads)
  tail     print the last N events (default 20)`;

type CliArgs = { command: 'verify' | 'replay' | 'tail'; at: { dir: string } | { url: string }; n: number };

/** Strict: an unknown flag or a flag without its value is an error, not silently ignored. */
function parseArgs(args: readonly string[], env: Readonly<Record<string, string | undefined>>): CliArgs | { error: string } {
  const [command, ...rest] = args;
  if (command !== 'verify' && command !== 'replay' && command !== 'tail') return { error: command ? `unknown command ${command}` : 'a command is required' };
  const values = new Map<string, string>();
  const names: Record<string, string> = { '--dir': 'dir', '-d': 'dir', '--url': 'url', '-n': 'n', '--lines': 'n' };
  for (let i = 0; i < rest.length; i++) {
    const [flag, inline] = rest[i].includes('=') ? [rest[i].slice(0, rest[i].indexOf('=')), rest[i].slice(rest[i].indexOf('=') + 1)] : [rest[i], undefined];
    const key = names[flag];
    if (!key) return { error: `unknown argument ${rest[i]}` };
    const value = inline ?? rest[++i];
    if (value === undefined || value === '') return { error: `${flag}: a value is required` };
    values.set(key, value);
  }
  const dir = values.get('dir');
  // Without either flag, the database the service is configured with, as the service would read it.
  const url = values.get('url') ?? (dir ? undefined : env.BRAINSTEM_JOURNAL_URL || undefined);
  if (dir && url) return { error: '--dir and --url: give one' };
  if (!dir && !url) return { error: '--dir or --url is required (or BRAINSTEM_JOURNAL_URL in the environment)' };
  if (url && !/^postgres(ql)?:\/\//.test(url)) return { error: '--url: expected a postgres:// or postgresql:// URL' };
  const n = Number(values.get('n') ?? 20);
  if (!Number.isInteger(n) || n < 1) return { error: '-n: expected a positive integer' };
  return { command, at: url ? { url } : { dir: dir as string }, n };
}

/** One readable line per event: seq, time, stream@version, type, data (shortened). */
export function formatEvent(e: JournalEvent): string {
  const data = JSON.stringify(e.data);
  const shown = data.length > 120 ? data.slice(0, 117) + '...' : data;
  return `${String(e.seq).padStart(8)}  ${e.at}  ${`${e.stream}@${e.version}`.padEnd(32)}  ${e.type.padEnd(28)}  ${shown}`;
}

/** Opens the journal without verifying it (verify does), refusing a place that holds none rather than creating one. */
async function openForInspection(at: CliArgs['at']): Promise<EventJournal | { missing: string }> {
  if ('url' in at) {
    // Read-only here: the database may be in use by running nodes, which is fine.
    return openPgJournal(at.url, { verifyOnOpen: 'none', create: false, poolSize: 2 });
  }
  const { dir } = at;
  if (!existsSync(join(dir, 'db', 'CURRENT'))) return { missing: `no journal at ${dir}${existsSync(dir) ? '' : ' (no such directory)'}` };
  return EventJournal.open(new LevelStorage(dir, { sync: true }), { verifyOnOpen: 'none' });
}

/** `brainstem journal …` on a stopped LevelDB journal, or a PostgreSQL one. Returns the exit code. */
export async function journalCli(args: readonly string[], io: CliIo, env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  const parsed = parseArgs(args, env);
  if ('error' in parsed) {
    io.err(`brainstem journal: ${parsed.error}\n${USAGE}`);
    return 2;
  }
  const { command, at, n } = parsed;
  let journal: EventJournal;
  try {
    // Opening would create an empty journal: a mistyped --dir or --url must not verify as a healthy one.
    const opened = await openForInspection(at);
    if ('missing' in opened) {
      io.err(`brainstem: ${opened.missing}`);
      return 1;
    }
    journal = opened;
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
