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

/**
 * Every profile stream's state, folded with the decider's evolve and evolveIndex: at boot, on the service's own appends
 * and on other nodes' alike. Each stream's state is replaced, never changed, so a state handed out stays as it was.
 */
export class ProfileCatalog {
  private readonly streams = new Map<string, ProfileStream>();
  private index: ProfilesIndex = emptyIndex();
  private readonly registered = new Set<string>();
  private folded = 0;

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
    this.folded++;
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

  /** Ids of the profile streams the index names. */
  registeredIds(): string[] {
    return [...this.registered];
  }

  /** The default chosen (null: none, or deleted since). */
  defaultId(): string | null {
    return defaultOf(this.streams.values());
  }

  bindings(): Record<string, string> {
    return bindingsOf(this.index, (id) => this.streams.get(id));
  }

  /** Whether no profile event was folded: the journal knows nothing of profiles. */
  get empty(): boolean {
    return this.folded === 0;
  }

  /** The state file's contents: what the journal says, and the mtime each file had when it last agreed with the journal. */
  stateFile(fileMtime: (id: string) => number | undefined): ProfilesState {
    const profiles: ProfilesState['profiles'] = {};
    for (const [id, r] of this.records()) profiles[id] = { ...r.meta, file_mtime_ms: fileMtime(id) ?? 0 };
    return { format: 2, default_profile_id: this.defaultId(), project_bindings: this.bindings(), profiles };
  }
}
