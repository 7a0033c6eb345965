import { SideWrite } from '../../src/journal/command-handler';
import { Journal } from '../../src/journal/journal.port';
import { OutputElsewhere, SessionDirectory, SessionHolder, SessionView, turnResultOf } from '../../src/supervision/session-directory.port';

/**
 * A session directory for supervision tests that journals session events the way the sessions module
 * does (stream session-<id>), so supervision sees real bus events.
 */
/** The state a waiting signal takes a session to. */
const WAITS_IN: Readonly<Record<string, string>> = {
  'session.asked_human': 'pending_decision',
  'session.blocked': 'pending_handling',
  'session.permission_requested': 'pending_authorization',
  'session.turn_ended': 'pending_handling',
};

export class MemorySessionDirectory implements SessionDirectory {
  readonly sessions: SessionView[] = [];
  readonly holders: SessionHolder[] = [];
  /** Output lines by session id, as the sessions module's logs would hold them. */
  readonly outputs = new Map<string, string[]>();
  newSessionsExcluded = false;
  newExternalJoins = false;
  /** Each session stream's version as this directory last wrote it (0: not written yet). */
  private readonly versions = new Map<string, number>();
  /** The sessions by id, as the sessions module's registry finds them: a lookup, not a scan (benches hold 1,000). */
  private readonly byId = new Map<string, SessionView>();

  constructor(private readonly journal: Journal) {}

  list(): SessionView[] {
    return this.sessions.map((s) => ({ ...s }));
  }

  get(id: string): SessionView | undefined {
    const s = this.find(id);
    return s ? { ...s } : undefined;
  }

  private find(id: string): SessionView | undefined {
    return this.byId.get(id);
  }

  add(id: string, over: Partial<SessionView> = {}): SessionView {
    const since = over.state_since ?? Date.now();
    const s: SessionView = {
      id,
      alias: `w${this.sessions.length + 1}`,
      state: 'working',
      state_since: since,
      excluded: this.newSessionsExcluded,
      active: true,
      recoverable: true,
      last_result: null,
      waiting_on: null,
      attention_since: since,
      ...over,
    };
    this.sessions.push(s);
    this.byId.set(id, s);
    return s;
  }

  holdWhile(holder: SessionHolder): void {
    this.holders.push(holder);
  }

  outputTail(id: string, lines: number): string[] {
    return (this.outputs.get(id) ?? []).slice(-lines);
  }

  /** Sessions with a `node` run there: their output is what that node gives (outputsElsewhere), or none when it is absent. */
  readonly outputsElsewhere = new Map<string, string[]>();

  async outputTailsElsewhere(ids: readonly string[], lines: number): Promise<ReadonlyMap<string, OutputElsewhere>> {
    const given = new Map<string, OutputElsewhere>();
    for (const id of ids) {
      const s = this.find(id);
      if (!s?.node || turnResultOf(s.last_result) !== null) continue;
      const out = this.outputsElsewhere.get(id);
      given.set(id, out ? { lines: out.slice(-lines) } : { unanswered: `node ${s.node} did not answer` });
    }
    return given;
  }

  excludeNewSessions(excluded: boolean): void {
    this.newSessionsExcluded = excluded;
  }

  /** The holds asked for, in order: this directory journals nothing for them. */
  readonly holds: Array<{ id: string; reason: string; detail: string; by: string }> = [];

  async hold(id: string, reason: 'loop', detail: string, by: string): Promise<boolean> {
    const first = !this.holds.some((h) => h.id === id);
    this.holds.push({ id, reason, detail, by });
    return first;
  }

  includeNewExternalSessions(included: boolean): void {
    this.newExternalJoins = included;
  }

  exclusionWrite(id: string, excluded: boolean, actor: string): SideWrite | null {
    const s = this.find(id);
    if (!s || s.excluded === excluded) return null;
    return {
      stream: `session-${id}`,
      expectedVersion: this.versions.get(id) ?? 0,
      events: [{ type: 'session.exclusion_changed', data: { at: Date.now(), excluded }, meta: { actor } }],
      apply: (r) => {
        s.excluded = excluded;
        this.versions.set(id, r.version);
      },
    };
  }

  /** Emits a session event, applied as the sessions module applies it (its state, what it waits on) before it is published. */
  async emit(id: string, type: string, data: Record<string, unknown>): Promise<void> {
    const s = this.find(id)!;
    // What the sessions module's directory would say after the event: the state, and what a waiting session waits on.
    const apply = () => {
      if (type === 'session.state_changed') {
        s.state = data.to as string;
        s.state_since = s.attention_since = Date.now();
      }
      // A signal that makes a session wait takes it to its state, as the session machine does (a spec may say so too).
      const waitsIn = WAITS_IN[type];
      if (waitsIn && !data.superseded && s.active && s.state !== waitsIn) {
        s.state = waitsIn;
        s.state_since = Date.now();
      }
      const waits = { 'session.asked_human': ['question', data.question], 'session.blocked': ['blocked', data.reason] }[type];
      if (waits) s.waiting_on = { kind: waits[0] as 'question' | 'blocked', text: String(waits[1]) };
      if (type === 'session.permission_requested') s.waiting_on = { kind: 'permission', text: String(data.tool), request_id: String(data.request_id), input: data.input ?? {} };
      if (waits || type === 'session.permission_requested') s.attention_since = Date.now();
      if (type === 'session.turn_ended' && !data.superseded) {
        s.last_result = typeof data.result === 'string' ? data.result : null;
        s.waiting_on = null;
        s.attention_since = Date.now();
      }
      if (type === 'session.exited') {
        s.state = 'exited';
        s.active = false;
      }
    };
    // Applied once durable and before publication, as the session registry does.
    await this.journal.append(`session-${id}`, [{ type, data }], {
      apply: (r) => {
        apply();
        this.versions.set(id, r.version);
      },
    });
  }
}
