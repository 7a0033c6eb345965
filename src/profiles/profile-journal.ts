import { CommandStream, SideWrite, handleCommand } from '../journal/command-handler';
import { Journal, JournalEvent, JournalReader } from '../journal/journal.port';
import { CatalogSnapshot, INDEX_STREAM, ProfileCatalog, SNAPSHOT_FORMAT, isProfileStream, profileStream } from './profile-catalog';
import { BUILTIN_DOCS } from './profile-document';
import { ProfileDecision, ProfileEvent, ProfileStream, ProfilesIndex, evolve, evolveIndex, registeredIds } from './profile.decider';

/** One stream's part in a profile command, decided against that stream's state in the catalogue. */
export type CommandPart =
  | { kind: 'profile'; id: string; decide: (state: ProfileStream) => ProfileDecision }
  | { kind: 'index'; decide: (state: ProfilesIndex) => ProfileDecision };

/** Events that begin a user profile: a stream they begin is registered on stream `profiles` in the same append. */
const BEGINS = new Set<string>(['profile.created', 'profile.duplicated', 'profile.imported', 'profile.edited_on_disk']);

/**
 * The profiles' side of the one command path (handleCommand): a command decided on one stream or on several (the hand
 * edits a scan found), appended in one atomic append, each stream at the version it was decided at, and folded into the
 * catalogue in the append's apply step. The caller runs one command at a time.
 */
export class ProfileCommands {
  constructor(
    private readonly journal: Journal,
    private readonly catalog: ProfileCatalog,
  ) {}

  /**
   * Decides every part; the first that decides anything (or the only one, so its refusal is thrown) leads, the others
   * go alongside it. `effects` runs once the events are durable and folded, with every event appended. Answers them.
   */
  async run(parts: readonly CommandPart[], effects: (stored: readonly JournalEvent[]) => Promise<void>): Promise<readonly JournalEvent[]> {
    const lead = parts.length === 1 ? parts[0] : parts.find((p) => this.decided(p).events.length > 0);
    if (!lead) return [];
    const others = parts.filter((p) => p !== lead);
    const side: JournalEvent[] = [];
    let all: readonly JournalEvent[] = [];
    const options = {
      alongside: (events: readonly ProfileEvent[]) => this.alongside(lead, events, others, side),
      afterAppend: async ({ stored }: { stored: readonly JournalEvent[] }) => {
        all = [...stored, ...side].sort((a, b) => a.seq - b.seq);
        await effects(all);
      },
    };
    if (lead.kind === 'index') await handleCommand(this.journal, this.indexStream(), lead.decide, evolveIndex, options);
    else await handleCommand(this.journal, this.profileStream(lead.id), lead.decide, evolve, options);
    return all;
  }

  private decided(p: CommandPart): ProfileDecision {
    return p.kind === 'index' ? p.decide(this.catalog.indexState()) : p.decide(this.catalog.stream(p.id));
  }

  /** The other parts' events, and the registration of the profile streams this append begins. */
  private alongside(lead: CommandPart, leadEvents: readonly ProfileEvent[], others: readonly CommandPart[], sink: JournalEvent[]): SideWrite[] {
    const writes: SideWrite[] = [];
    const begun: string[] = [];
    const note = (p: CommandPart, events: readonly ProfileEvent[]) => {
      if (p.kind === 'profile' && !this.catalog.isRegistered(p.id) && events.some((e) => BEGINS.has(e.type))) begun.push(p.id);
    };
    note(lead, leadEvents);
    for (const p of others) {
      const { events } = this.decided(p);
      if (events.length === 0) continue;
      note(p, events);
      const stream = p.kind === 'index' ? INDEX_STREAM : profileStream(p.id);
      const version = p.kind === 'index' ? this.catalog.indexState().version : this.catalog.stream(p.id).version;
      writes.push(this.sideWrite(stream, version, events, sink));
    }
    if (begun.length > 0) {
      const registration: ProfileEvent = { type: 'profile.registered', data: { ids: begun } };
      writes.push(this.sideWrite(INDEX_STREAM, this.catalog.indexState().version, [registration], sink));
    }
    return writes;
  }

  private sideWrite(stream: string, expectedVersion: number, events: readonly ProfileEvent[], sink: JournalEvent[]): SideWrite {
    return {
      stream,
      expectedVersion,
      events,
      apply: (result) => {
        for (const e of result.events) this.catalog.apply(e);
        sink.push(...result.events);
      },
    };
  }

  private profileStream(id: string): CommandStream<ProfileStream> {
    return {
      name: profileStream(id),
      current: () => {
        const state = this.catalog.stream(id);
        return { state, version: state.version };
      },
      adopt: (_state, _version, stored) => stored.forEach((e) => this.catalog.apply(e)),
    };
  }

  private indexStream(): CommandStream<ProfilesIndex> {
    return {
      name: INDEX_STREAM,
      current: () => {
        const state = this.catalog.indexState();
        return { state, version: state.version };
      },
      adopt: (_state, _version, stored) => stored.forEach((e) => this.catalog.apply(e)),
    };
  }
}

/** Every this many profile events folded, the catalogue is snapshotted: boot reads the snapshot and what follows it. */
export const SNAPSHOT_EVERY = 64;

/**
 * Folds the profile streams into the catalogue: the snapshot of stream `profiles` and what was journaled past it;
 * without a snapshot, every stream the index registers (`indexed`), else, for a journal from before the index, the
 * whole journal.
 */
export async function loadCatalog(journal: JournalReader, catalog: ProfileCatalog, indexed: boolean, warn: (message: string) => void): Promise<void> {
  const snapshot = await journal
    .loadSnapshot<CatalogSnapshot>(INDEX_STREAM)
    .then((s) => (s?.state.format === SNAPSHOT_FORMAT ? s : null))
    .catch((e: unknown) => {
      warn(`the profiles snapshot cannot be used (${(e as Error).message}); the profile streams are read instead`);
      return null;
    });
  let events: JournalEvent[];
  if (snapshot) {
    catalog.restore(snapshot.state);
    // What followed the snapshot: the journal's events since (after a graceful stop, a few), unless there are more of
    // them than looking up each stream's version costs.
    const behind = journal.head().seq - snapshot.state.head;
    events = behind <= Math.max(1000, 4 * snapshot.state.streams.length) ? await profileEventsAfter(journal, snapshot.state.head) : await tailsAfter(journal, catalog);
  } else events = indexed ? await indexedEvents(journal) : await profileEventsAfter(journal, 0);
  for (const e of events.sort((a, b) => a.seq - b.seq)) catalog.apply(e);
}

/** The events past a restored snapshot: of stream `profiles`, of the streams it held, and of those registered since. */
async function tailsAfter(journal: JournalReader, catalog: ProfileCatalog): Promise<JournalEvent[]> {
  const index = await journal.readStream(INDEX_STREAM, catalog.indexState().version + 1);
  const ids = new Set([...BUILTIN_DOCS.keys(), ...catalog.streamIds(), ...index.flatMap(registeredIds)]);
  const tails = await Promise.all(
    [...ids].map(async (id) => {
      const known = catalog.stream(id).version;
      return (await journal.streamVersion(profileStream(id))) > known ? journal.readStream(profileStream(id), known + 1) : [];
    }),
  );
  return [...index, ...tails.flat()];
}

/** The events of stream `profiles`, of the profile streams it registers and of the built-ins' streams (defaults, applies). */
async function indexedEvents(journal: JournalReader): Promise<JournalEvent[]> {
  const index = await journal.readStream(INDEX_STREAM);
  const ids = new Set([...BUILTIN_DOCS.keys(), ...index.flatMap(registeredIds)]);
  const streams = await Promise.all([...ids].map((id) => journal.readStream(profileStream(id))));
  return [...index, ...streams.flat()];
}

/** Every event of the profile streams journaled after `after`, oldest first (0: the whole journal). */
async function profileEventsAfter(journal: JournalReader, after: number): Promise<JournalEvent[]> {
  const events: JournalEvent[] = [];
  for (let seq = after; ; ) {
    const page = await journal.readAll(seq, 1000);
    if (page.length === 0) return events;
    for (const e of page) if (isProfileStream(e.stream)) events.push(e);
    seq = page[page.length - 1].seq;
  }
}

/** Snapshots of the catalogue on stream `profiles`, taken one at a time. They only spare boot reads: a failure is logged. */
export class CatalogSnapshots {
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly journal: Journal,
    private readonly catalog: ProfileCatalog,
    private readonly warn: (message: string) => void,
  ) {}

  /** Takes one when SNAPSHOT_EVERY events were folded since the last (`always`: when any was). */
  save(always = false): Promise<void> {
    const version = this.catalog.indexState().version;
    const since = this.catalog.sinceSnapshot;
    if (version === 0 || since === 0 || (!always && since < SNAPSHOT_EVERY)) return this.writes;
    const state = this.catalog.snapshot(this.journal.head().seq);
    this.writes = this.writes
      .then(() => this.journal.saveSnapshot(INDEX_STREAM, { version, state }))
      .catch((e: unknown) => this.warn(`profiles snapshot failed: ${(e as Error).message}`));
    return this.writes;
  }
}
