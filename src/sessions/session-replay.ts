import { JournalReader } from '../journal/journal.port';
import { AliasIndex, NO_ALIASES, evolveAliases } from './session-aliases';
import { evolve } from './session.decider';
import { SESSIONS_STREAM, SessionAliasAssignedData, decodeRecord, sessionStream } from './session.events';
import { SessionSnapshot, accepts, stateOf } from './session.machine';
import { StoredSession, restoreSession } from './session.snapshot';

/** The snapshot of stream `sessions`: the aliases numbered so far, and each session in memory with its retention clock (null while live). */
export interface SessionIndex {
  alias_count: number;
  sessions: Array<[string, number | null]>;
}

/** Stream `sessions` as boot reads it: the aliases, the version read, and the sessions it names with their retention clocks. */
export interface LoadedIndex {
  aliases: AliasIndex;
  version: number;
  /** The version its snapshot was taken at (0: none). */
  snapshotVersion: number;
  clocks: Map<string, number | null>;
}

/** The index's snapshot, then the numbering appended after it (each session numbered since is live as far as the index knows). */
export async function readIndex(journal: JournalReader): Promise<LoadedIndex> {
  const snap = await journal.loadSnapshot<SessionIndex>(SESSIONS_STREAM);
  const clocks = new Map<string, number | null>(snap?.state.sessions ?? []);
  let aliases: AliasIndex = snap ? { alias_count: snap.state.alias_count } : NO_ALIASES;
  let version = snap?.version ?? 0;
  for (const e of await journal.readStream(SESSIONS_STREAM, version + 1)) {
    version = e.version;
    aliases = evolveAliases(aliases, e);
    if (e.type === 'session.alias_assigned') clocks.set((e.data as unknown as SessionAliasAssignedData).session_id, null);
  }
  return { aliases, version, snapshotVersion: snap?.version ?? 0, clocks };
}

/**
 * A session rebuilt from its snapshot and the tail after it, folded with the decider's evolve: the fold live commands
 * use, so replay never re-runs an effect. `env`: its values kept outside the journal; `node`: the node a session
 * created before nodes is taken as. Null for an alias whose creation never reached the journal (a crash in between,
 * in journals written before the two were one append).
 */
export async function rebuildSession(
  journal: JournalReader,
  id: string,
  context: { env: Record<string, string> | null; node: string },
  warn: (message: string) => void,
): Promise<{ snapshot: SessionSnapshot; version: number } | null> {
  const stream = sessionStream(id);
  const snap = await journal.loadSnapshot<StoredSession>(stream);
  let snapshot: SessionSnapshot | null = snap ? restoreSession(snap.state, context.env) : null;
  let version = snap?.version ?? 0;
  for (const e of await journal.readStream(stream, version + 1)) {
    version = e.version;
    const fact = decodeRecord(e, context);
    if (!fact) continue;
    if (snapshot && fact.type !== 'session.created' && !accepts(snapshot, fact)) {
      warn(`replay of ${stream}@${e.version}: ${e.type} not accepted in ${stateOf(snapshot)}, skipped`);
      continue;
    }
    snapshot = evolve(snapshot, fact);
  }
  return snapshot ? { snapshot, version } : null;
}
