import { SessionAliasAssignedData } from './session.events';

/** What stream `sessions` decides on: how many aliases it has numbered (they are never reused). */
export interface AliasIndex {
  alias_count: number;
}

export const NO_ALIASES: AliasIndex = { alias_count: 0 };

/**
 * The next alias, pure: one past the last numbered. Appended at the version of stream `sessions` it was decided on,
 * so two nodes never number two sessions alike: the one that comes second conflicts, catches up and numbers again.
 */
export function numberSession(index: AliasIndex, sessionId: string): SessionAliasAssignedData {
  const number = index.alias_count + 1;
  return { session_id: sessionId, alias: `w${number}`, number };
}

/** Folds one stored event of stream `sessions` (boot, other nodes, the command path alike). */
export function evolveAliases(index: AliasIndex, event: { type: string; data: unknown }): AliasIndex {
  if (event.type !== 'session.alias_assigned') return index;
  const { number } = event.data as SessionAliasAssignedData;
  return number > index.alias_count ? { alias_count: number } : index;
}
