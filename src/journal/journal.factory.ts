import { EventJournal, JournalOptions } from './event-journal';
import { LevelStorage } from './level.storage';
import { MemoryStorage } from './memory.storage';

export function openLevelJournal(dir: string, options: JournalOptions & { sync?: boolean } = {}): Promise<EventJournal> {
  return EventJournal.open(new LevelStorage(dir, { sync: options.sync ?? true }), options);
}

export function openMemoryJournal(options: JournalOptions = {}): Promise<EventJournal> {
  return EventJournal.open(new MemoryStorage(), options);
}
