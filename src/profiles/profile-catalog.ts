import { ProfileRecord, ProfileStream, ProfilesIndex, StoredEvent, bindingsOf, defaultOf, emptyIndex, emptyStream, evolve, evolveIndex, registeredIds } from './profile.decider';
import { BUILTIN_DOCS } from './profile-document';
import { ProfilesState } from './profiles-state';

export const INDEX_STREAM = 'profiles';
const PREFIX = 'profile-';

export const profileStream = (id: string): string => PREFIX + id;

/** The profile id of a stream `profile-<id>`; null for any other stream. */
export function profileIdOf(stream: string): string | null {
  return stream.startsWith(PREFIX) ? stream.slice(PREFIX.length) : null;
}

export const isProfileStream = (stream: string): boolean => stream === INDEX_STREAM || stream.startsWith(PREFIX);

/** The shape of the snapshot's states: a snapshot of another shape is not used (the streams are read instead). */
export const SNAPSHOT_FORMAT = 1;

/** The catalogue as a snapshot of stream `profiles` holds it: every stream's state, each with its version. */
export interface CatalogSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  /** The journal's head when it was taken: every profile event up to it is in it. */
  head: number;
  streams: ProfileStream[];
  index: ProfilesIndex;
  registered: string[];
}

/**
 * Every profile stream's state, folded with the decider's evolve and evolveIndex: at boot, on the service's own appends
 * and on other nodes' alike. Each stream's state is replaced, never changed, so a state handed out stays as it was.
 */
export class ProfileCatalog {
  private readonly streams = new Map<string, ProfileStream>();
  private index: ProfilesIndex = emptyIndex();
  private readonly registered = new Set<string>();
  /** Events folded since the last snapshot was taken. */
  private unsnapshotted = 0;

  /** Folds an event of a profile stream; one the catalogue holds already (its version is not past the stream's) is skipped. */
  apply(e: StoredEvent & { stream: string }): void {
    if (e.stream === INDEX_STREAM) {
      if (e.version <= this.index.version) return;
      this.index = evolveIndex(this.index, e);
      for (const id of registeredIds(e)) this.registered.add(id);
    } else {
      const id = profileIdOf(e.stream);
      if (id === null) return;
      const state = this.stream(id);
      if (e.version <= state.version) return;
      this.streams.set(id, evolve(state, e));
    }
    this.unsnapshotted++;
  }

  /** Takes the states a snapshot holds (before anything is folded). */
  restore(snapshot: CatalogSnapshot): void {
    for (const s of snapshot.streams) this.streams.set(s.id, s);
    this.index = snapshot.index;
    for (const id of snapshot.registered) this.registered.add(id);
  }

  /** The states to snapshot, taken when the journal's head is `head`. */
  snapshot(head: number): CatalogSnapshot {
    this.unsnapshotted = 0;
    return { format: SNAPSHOT_FORMAT, head, streams: [...this.streams.values()], index: this.index, registered: [...this.registered] };
  }

  get sinceSnapshot(): number {
    return this.unsnapshotted;
  }

  /** Ids of the streams the catalogue holds a state for (built-ins' included). */
  streamIds(): string[] {
    return [...this.streams.keys()];
  }

  stream(id: string): ProfileStream {
    return this.streams.get(id) ?? emptyStream(id);
  }

  indexState(): ProfilesIndex {
    return this.index;
  }

  /** The user profile with that id, if the journal holds one. */
  record(id: string): ProfileRecord | null {
    return this.streams.get(id)?.profile ?? null;
  }

  /** Every user profile the journal holds. */
  *records(): Iterable<[string, ProfileRecord]> {
    for (const [id, s] of this.streams) if (s.profile) yield [id, s.profile];
  }

  isRegistered(id: string): boolean {
    return this.registered.has(id);
  }

  /** User profile streams journaled before the index registered streams: the index is told of them once. */
  unregistered(): string[] {
    return [...this.streams.keys()].filter((id) => !this.registered.has(id) && !BUILTIN_DOCS.has(id)).sort();
  }

  /** The default chosen (null: none, or deleted since). */
  defaultId(): string | null {
    return defaultOf(this.streams.values());
  }

  bindings(): Record<string, string> {
    return bindingsOf(this.index, (id) => this.streams.get(id));
  }

  /** Whether the journal knows nothing of profiles. */
  get empty(): boolean {
    return this.streams.size === 0 && this.index.version === 0;
  }

  /** The state file's contents: what the journal says, and the mtime each file had when it last agreed with the journal. */
  stateFile(fileMtime: (id: string) => number | undefined): ProfilesState {
    const profiles: ProfilesState['profiles'] = {};
    for (const [id, r] of this.records()) profiles[id] = { ...r.meta, file_mtime_ms: fileMtime(id) ?? 0 };
    return { format: 2, default_profile_id: this.defaultId(), project_bindings: this.bindings(), profiles };
  }
}
