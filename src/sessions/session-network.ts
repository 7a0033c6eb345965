import { DomainError } from '../common/domain-error';
import { parseDto } from '../common/validation-errors';
import { SessionActor } from './session.actor';
import { SessionCommands } from './session.commands';
import { NetworkAskDto, NetworkRefusalDto } from './session.dto';
import { SessionEventOf, pendingPermission } from './session.events';
import { decidedFor } from './session-network.decider';
import { IdGenerator } from './session.ports';
import { SessionSetup } from './session-setup';

/** What the launcher answers srt's ask callback with: only `allow: true` lets the connection through. */
export interface NetworkAskAnswer {
  allow: boolean;
  reason: string | null;
}

/** The launcher's body held to its DTO: 400 naming the field. */
function parsed<T extends object>(type: new () => T, body: unknown): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new DomainError('invalid_input', 'body: must be a JSON object');
  return parseDto(type, body);
}

const answerOf = (e: SessionEventOf<'session.network_decided'>): NetworkAskAnswer => ({ allow: e.decision === 'allow', reason: e.reason });

/**
 * A sandboxed worker's network, as its launcher brings it (POST …/network-asks, …/network-refusals): each ask decided in
 * the session's mailbox (session-network.decider.ts) on the profile's rules as they are now; one no rule decides waits,
 * as a `Network` permission request, for the user's or the brain's answer, the session's exit, the launcher going away,
 * or `wait_s` (then it is denied). The answer always comes, so srt's connection never hangs.
 */
export class SessionNetwork {
  constructor(
    private readonly commands: SessionCommands,
    private readonly setup: SessionSetup,
    private readonly ids: IdGenerator,
    private readonly wait_s: number,
  ) {}

  /** `gone` aborts when the launcher's connection closes. */
  async ask(idOrAlias: string, body: unknown, gone: AbortSignal): Promise<NetworkAskAnswer> {
    const { host, port } = parsed(NetworkAskDto, body);
    const actor = await this.commands.commandable(idOrAlias);
    const request_id = this.ids.requestId();
    const [event] = await actor.run(async () => {
      const rules = await this.setup.networkRules(actor.context.profile_id);
      return this.commands.execute(actor, { type: 'ask_network', host, port, request_id, rules }, 'worker');
    });
    if (event?.type === 'session.network_decided') return answerOf(event);
    const settled = (a: SessionActor): boolean => !a.live || decidedFor(a.context, request_id) !== null || pendingPermission(a.context, request_id) === undefined;
    await actor.until(settled, this.wait_s * 1000, gone);
    const answered = decidedFor(actor.context, request_id);
    if (answered) return answerOf(answered);
    // Denied as the wait ended, unless an answer was journaled first: the decider says which.
    await actor.run(() => this.commands.execute(actor, { type: 'end_network_ask', request_id, host, port, why: gone.aborted ? 'abandoned' : 'timeout', wait_s: this.wait_s }));
    const ended = decidedFor(actor.context, request_id);
    return ended ? answerOf(ended) : { allow: false, reason: 'the request ended unanswered' };
  }

  /** A connection srt refused on its own, journaled for the session's detail. */
  async refused(idOrAlias: string, body: unknown): Promise<void> {
    const { host, port, reason } = parsed(NetworkRefusalDto, body);
    const actor = await this.commands.commandable(idOrAlias);
    await actor.run(() => this.commands.execute(actor, { type: 'report_network_refused', host, port, reason }, 'worker'));
  }
}
