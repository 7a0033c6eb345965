import { EventJournal, JournalOptions } from './event-journal';
import { LevelStorage } from './level.storage';
import { MemoryStorage } from './memory.storage';
import { PgStorage, PgStorageOptions, redactUrl } from './pg.storage';

export function openLevelJournal(dir: string, options: JournalOptions & { sync?: boolean } = {}): Promise<EventJournal> {
  return EventJournal.open(new LevelStorage(dir, { sync: options.sync ?? true }), options);
}

export function openMemoryJournal(options: JournalOptions = {}): Promise<EventJournal> {
  return EventJournal.open(new MemoryStorage(), options);
}

export interface PgJournalOptions extends JournalOptions, PgStorageOptions {
  /**
   * Follow the other writers of the database: on each commit they NOTIFY, the journal catches up and publishes their
   * events on committed$. onFollowError hears a catch-up or a LISTEN connection that failed (it is opened again,
   * and the journal catches up by seq once it is).
   */
  follow?: boolean;
  onFollowError?: (e: Error) => void;
}

/** The journal in a PostgreSQL database (postgres:// URL); its schema is created or migrated on open. */
export async function openPgJournal(url: string, options: PgJournalOptions = {}): Promise<EventJournal> {
  const storage = new PgStorage(url, options);
  const journal = await EventJournal.open(storage, options);
  if (options.follow) {
    const onError = options.onFollowError ?? (() => undefined);
    try {
      // A notice of a seq this journal already holds is its own commit (or one it caught up with): nothing to read.
      await storage.listen(
        (seq) => {
          if (seq > journal.head().seq) journal.catchUp().catch(onError);
        },
        onError,
        // Notices sent while the connection was down are lost: what they announced is read by seq.
        () => journal.catchUp().catch(onError),
      );
    } catch (e) {
      await journal.close();
      throw e;
    }
  }
  return journal;
}

/**
 * The service's journal as configured: the database at journal.url, following its other writers, when set (opened as
 * `node`, which is refused on a schema of another version while other nodes run on it); otherwise the embedded LevelDB
 * journal in journal.dir.
 */
export function openConfiguredJournal(
  config: { dir: string; url: string | null; sync: boolean; checkpoint_every: number },
  options: JournalOptions & { onFollowError?: (e: Error) => void; node?: PgStorageOptions['node'] } = {},
): Promise<EventJournal> {
  const { node, ...journal } = options;
  const common = { ...journal, checkpointEvery: config.checkpoint_every };
  if (config.url) return openPgJournal(config.url, { ...common, node, follow: true });
  return openLevelJournal(config.dir, { ...common, sync: config.sync });
}

/** Where the service's journal lives, for the log: the database (without its password) or the LevelDB directory. */
export function journalLocation(config: { journal: { dir: string; url: string | null } }): string {
  return config.journal.url ? redactUrl(config.journal.url) : config.journal.dir;
}
