import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { segmentKey } from '../../src/journal/level.storage';

/** Opens a stopped journal's LevelDB directly, to damage it the way a disk or a person could. */
export async function tamper(dir: string, change: (db: ClassicLevel<string, string>) => Promise<void>): Promise<void> {
  const db = new ClassicLevel<string, string>(join(dir, 'db'));
  await db.open();
  try {
    await change(db);
  } finally {
    await db.close();
  }
}

/** The key of the stored segment that holds the event at seq. */
export async function segmentKeyHolding(db: ClassicLevel<string, string>, seq: number): Promise<string> {
  const [key] = await db.keys({ gte: segmentKey(seq), lt: 'g"', limit: 1 }).all();
  if (!key) throw new Error(`no stored segment holds seq ${seq}`);
  return key;
}

/** Rewrites the stored segment holding seq through `edit`, which sees and returns the whole segment. */
export function editStoredEvent(dir: string, seq: number, edit: (segment: string) => string): Promise<void> {
  return tamper(dir, async (db) => {
    const key = await segmentKeyHolding(db, seq);
    await db.put(key, edit((await db.get(key))!));
  });
}
