import { EventBus } from '../../src/bus/event-bus';
import { SessionDirectory, SessionHolder, SessionView } from '../../src/supervision/session-directory.port';

/**
 * A session directory for supervision tests that journals session events the way the sessions module
 * does (stream session-<id>), so supervision sees real bus events.
 */
export class MemorySessionDirectory implements SessionDirectory {
  readonly sessions: SessionView[] = [];
  readonly holders: SessionHolder[] = [];
  /** Output lines by session id, as the sessions module's logs would hold them. */
  readonly outputs = new Map<string, string[]>();
  newSessionsExcluded = false;

  constructor(private readonly bus: EventBus) {}

  list(): SessionView[] {
    return this.sessions.map((s) => ({ ...s }));
  }

  get(id: string): SessionView | undefined {
    const s = this.sessions.find((x) => x.id === id);
    return s ? { ...s } : undefined;
  }

  add(id: string, over: Partial<SessionView> = {}): SessionView {
    const s: SessionView = { id, alias: `w${this.sessions.length + 1}`, state: 'working', state_since: Date.now(), excluded: this.newSessionsExcluded, active: true, recoverable: true, last_result: null, ...over };
    this.sessions.push(s);
    return s;
  }

  holdWhile(holder: SessionHolder): void {
    this.holders.push(holder);
  }

  outputTail(id: string, lines: number): string[] {
    return (this.outputs.get(id) ?? []).slice(-lines);
  }

  excludeNewSessions(excluded: boolean): void {
    this.newSessionsExcluded = excluded;
  }

  async setExcluded(id: string, excluded: boolean): Promise<void> {
    const s = this.sessions.find((x) => x.id === id)!;
    s.excluded = excluded;
  }

  async emit(id: string, type: string, data: Record<string, unknown>): Promise<void> {
    const s = this.sessions.find((x) => x.id === id)!;
    const apply = () => {
      if (type === 'session.state_changed') {
        s.state = data.to as string;
        s.state_since = Date.now();
      }
      if (type === 'session.exited') {
        s.state = 'exited';
        s.active = false;
      }
    };
    // Applied once durable and before publication, as the session registry does.
    await this.bus.emit(`session-${id}`, [{ type, data } as never], { apply });
  }
}
