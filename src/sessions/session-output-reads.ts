import { Observable, filter, map } from 'rxjs';
import { PeerClient, PeerEvent, PeerRefused, PeerUnreachable } from '../cluster/peer-client';
import { DomainError } from '../common/domain-error';
import { OutputElsewhere, turnResultOf } from '../supervision/session-directory.port';
import { SessionActor } from './session.actor';
import { OutputStreamMessage, SessionOutput } from './session-output';
import { reachableOwner } from './session-owner';
import { SessionRegistry } from './session.registry';

export interface OutputTail {
  id: string;
  alias: string;
  lines: string[];
}

const isLines = (v: unknown): v is string[] => Array.isArray(v) && v.every((l) => typeof l === 'string');

/** A message of the owner's stream as this node relays it; null for one it does not know (or malformed). */
export function relayedMessage(e: PeerEvent): OutputStreamMessage | null {
  let data: unknown;
  try {
    data = JSON.parse(e.data);
  } catch {
    return null;
  }
  const fields = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
  if (e.event === 'tail' && isLines(fields.lines)) return { type: 'tail', data: { lines: fields.lines } };
  if (e.event === 'output' && typeof fields.text === 'string') return { type: 'output', data: { text: fields.text } };
  return null;
}

/**
 * A session's output wherever it is read. The worker writes it on the node that owns the session, into a log on that
 * node's disk: the owner reads its own; any other node asks the owner with its node credential (the same route, the
 * same answer) and relays the live tail as it comes. An owner that is down or does not answer is a 503
 * owner_unavailable naming it, as for a command (docs/architecture/decisions.md).
 */
export class SessionOutputReads {
  constructor(
    private readonly registry: SessionRegistry,
    private readonly local: SessionOutput,
    private readonly peers: PeerClient,
  ) {}

  /** `timeoutMs`: how long the owner may take to answer, when another node owns the session (the peer client's bound by default). */
  async tail(idOrAlias: string, lines: number, timeoutMs?: number): Promise<OutputTail> {
    const actor = this.registry.get(idOrAlias);
    const head = { id: actor.id, alias: actor.context.alias };
    if (this.registry.owns(actor)) return { ...head, lines: this.local.tail(actor, lines) };
    const owner = await this.reachableOwner(actor);
    const body = await this.ask(actor, owner, () => this.peers.getJson(owner, `${this.pathOf(actor)}?tail=${lines}`, timeoutMs));
    const answered = typeof body === 'object' && body !== null ? (body as { lines?: unknown }).lines : undefined;
    if (!isLines(answered)) throw this.unavailable(actor, owner, 'it answered no lines');
    return { ...head, lines: answered };
  }

  /**
   * For a round (SessionDirectory.outputTailsElsewhere): the tails of those of these sessions another node runs whose
   * last turn reported no result, all asked at once, each given `withinMs` to answer; why not, for those that did not.
   */
  async tailsElsewhere(ids: readonly string[], lines: number, withinMs: number): Promise<Map<string, OutputElsewhere>> {
    const asked: Array<Promise<[string, OutputElsewhere]>> = [];
    for (const id of ids) {
      const actor = this.registry.find(id);
      if (!actor || this.registry.owns(actor) || turnResultOf(actor.context.last_result) !== null) continue;
      asked.push(this.tailWithin(actor, lines, withinMs).then((answer) => [id, answer]));
    }
    return new Map(asked.length ? await Promise.all(asked) : []);
  }

  private async tailWithin(actor: SessionActor, lines: number, withinMs: number): Promise<OutputElsewhere> {
    const late = `the output of session ${actor.context.alias} is kept on node ${this.registry.ownerOf(actor)}, which did not answer within ${withinMs} ms`;
    let timer: NodeJS.Timeout | undefined;
    // The fetch is bounded too, but finding the owner up may read the node table first: the timer bounds it all.
    const timedOut = new Promise<OutputElsewhere>((resolve) => (timer = setTimeout(() => resolve({ unanswered: late }), withinMs)));
    const answered = this.tail(actor.id, lines, withinMs).then(
      (t): OutputElsewhere => ({ lines: t.lines }),
      (e: unknown): OutputElsewhere => ({ unanswered: e instanceof Error ? e.message : String(e) }),
    );
    try {
      return await Promise.race([answered, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The tail, then each chunk as the worker writes it; `until` aborts when the client asking goes away. */
  async stream(idOrAlias: string, tail: number, until?: AbortSignal): Promise<Observable<OutputStreamMessage>> {
    const actor = this.registry.get(idOrAlias);
    if (this.registry.owns(actor)) return this.local.stream(actor, tail);
    const owner = await this.reachableOwner(actor);
    const events = await this.ask(actor, owner, () => this.peers.openStream(owner, `${this.pathOf(actor)}/stream?tail=${tail}`, until));
    return events.pipe(
      map(relayedMessage),
      filter((m): m is OutputStreamMessage => m !== null),
    );
  }

  private pathOf(actor: SessionActor): string {
    return `/coding-sessions/${encodeURIComponent(actor.id)}/output`;
  }

  private reachableOwner(actor: SessionActor): Promise<string> {
    return reachableOwner(this.registry, actor, 'its output is kept there');
  }

  private async ask<T>(actor: SessionActor, owner: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      if (e instanceof PeerRefused && e.status === 404) throw new DomainError('not_found', e.message);
      if (e instanceof PeerRefused) throw this.unavailable(actor, owner, `it answered ${e.status}${e.code === null ? '' : ` ${e.code}`}: ${e.message}`);
      if (e instanceof PeerUnreachable) throw this.unavailable(actor, owner, e.message);
      throw e;
    }
  }

  private unavailable(actor: SessionActor, owner: string, why: string): DomainError {
    return new DomainError('owner_unavailable', `the output of session ${actor.context.alias} is kept on node ${owner}, which could not give it: ${why}`, { node: owner });
  }
}
