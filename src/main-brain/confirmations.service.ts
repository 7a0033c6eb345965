import { DomainError } from '../common/domain-error';
import { SerialQueue } from '../common/serial-queue';
import { FollowedStream } from '../journal/followed-stream';
import { Journal } from '../journal/journal.port';
import { ChatService } from './chat.service';
import {
  Confirmation,
  ConfirmationCommand,
  ConfirmationStatus,
  ConfirmationsState,
  ToolOutcome,
  confirmationNotice,
  decide,
  evolveStored,
  statusAt,
} from './confirmation.decider';
import { HeldLoop } from '../supervision/loop-escalation';
import { GatedCall } from './tool-registry';

export const CONFIRMATIONS_STREAM = 'confirmations';

/** What a gated tool answers its caller: not an error, a call waiting for the user. */
export interface WaitingForUser {
  status: 'waiting_for_user';
  confirmation_id: string;
  what: string;
  note: string;
}

/**
 * What the user is asked when Brainstem holds a session whose loop persisted: a confirmation of release_session, so
 * the user's confirm releases it and a refusal (or its expiry) leaves it held. Brainstem's words only: no worker text.
 */
export function loopHoldConfirmation(held: HeldLoop): GatedCall {
  const description =
    `Release session ${held.alias} (${held.session_id}), which Brainstem held: it kept going round in circles (${held.pattern}: ${held.summary}) ` +
    `after the main brain was woken ${held.wakes} time(s) for it, and its turn was interrupted. Confirm to let it take turns again; ` +
    'refuse to leave it held (you can still stop it, or release it later).';
  return { tool: 'release_session', args: { session: held.session_id }, description, actor: 'brainstem' };
}

/** Runs a call the user confirmed (the tool registry, ungated). */
export type ConfirmedRunner = (tool: string, args: Record<string, unknown>) => Promise<unknown>;

/**
 * The human gate's confirmations: a gated call is journaled on `confirmations` and posted to the main chat; the user
 * confirms (the call runs then, with the arguments held) or refuses it over REST. Boot folds the stream back into
 * the pending ones; a call confirmed before a crash is never run again.
 */
export class ConfirmationsService {
  /** Commands append at its version, so on a shared journal a confirmation is decided once. */
  private readonly stream: FollowedStream<ConfirmationsState>;
  /** One command at a time, so a confirmation is decided once: two confirms cannot both run the call. */
  private readonly queue = new SerialQueue();
  /** Confirmed calls that are not registry tools (the hosted brain's own permission requests). */
  private readonly runners = new Map<string, (args: Record<string, unknown>) => unknown>();

  constructor(
    journal: Journal,
    private readonly chat: ChatService,
    private readonly runConfirmed: ConfirmedRunner,
    /** Whether runConfirmed knows the tool (a registry tool). */
    private readonly knows: (tool: string) => boolean,
    private readonly now: () => number,
    private readonly newId: () => string,
    private readonly ttlMs: number,
  ) {
    this.stream = new FollowedStream<ConfirmationsState>(journal, CONFIRMATIONS_STREAM, new Map(), evolveStored);
  }

  /** Rebuilds from the journal, then follows what other nodes sharing it append (from before it reads). */
  start(): Promise<void> {
    return this.stream.start();
  }

  stop(): void {
    this.stream.stop();
  }

  /** Runs confirmed requests named `tool` with `run` instead of the tool registry. */
  runWith(tool: string, run: (args: Record<string, unknown>) => unknown): void {
    this.runners.set(tool, run);
  }

  list(status?: ConfirmationStatus): Confirmation[] {
    const now = this.now();
    return [...this.stream.state.values()].map((c) => this.view(c, now)).filter((c) => status === undefined || c.status === status);
  }

  get(id: string): Confirmation {
    const c = this.stream.state.get(id);
    if (!c) throw new DomainError('confirmation_not_found', `no confirmation ${id}`);
    return this.view(c, this.now());
  }

  /** The gate keeper: holds the call for the user and answers the caller that it waits. */
  async request(call: GatedCall): Promise<WaitingForUser> {
    const id = `cf_${this.newId()}`;
    await this.command({ type: 'request', id, tool: call.tool, args: call.args, description: call.description, requested_by: call.actor, now: this.now(), ttl_ms: this.ttlMs });
    return {
      status: 'waiting_for_user',
      confirmation_id: id,
      what: call.description,
      note: 'Nothing has run yet: this needs the user. The user confirms or refuses it; the outcome is posted to the main chat.',
    };
  }

  /** Runs the held call now; its result or error is journaled and posted to the chat, and answered here. */
  async confirm(id: string, by: string): Promise<Confirmation> {
    const held = this.stream.state.get(id);
    // The hosted brain's own requests run on the node hosting it: another node sharing the journal cannot run them.
    if (held && !this.runners.has(held.tool) && !this.knows(held.tool)) {
      throw new DomainError('not_supervisor', `confirmation ${id} (${held.tool}) runs on the node that supervises and hosts the main brain: confirm it there`);
    }
    const c = await this.command({ type: 'confirm', id, by, now: this.now() });
    let outcome: ToolOutcome;
    try {
      // As JSON: the journal keeps data, not undefined fields.
      const run = this.runners.get(c.tool);
      const result = run ? await run(c.args) : await this.runConfirmed(c.tool, c.args);
      outcome = { ok: true, result: JSON.parse(JSON.stringify(result ?? null)) as unknown };
    } catch (e) {
      outcome = { ok: false, error: e instanceof DomainError ? { code: e.code, message: e.message } : { code: 'internal_error', message: e instanceof Error ? e.message : String(e) } };
    }
    return this.command({ type: 'record_outcome', id, outcome, now: this.now() });
  }

  refuse(id: string, by: string, reason: string | null): Promise<Confirmation> {
    return this.command({ type: 'refuse', id, by, reason, now: this.now() });
  }

  /**
   * The command path (decide, append at the stream's version, apply), then the chat is told; a refusal is thrown after
   * the events it still records (an expiry). Two nodes confirming one request: one runs it, the other, caught up, is
   * told it is no longer pending.
   */
  private command(cmd: ConfirmationCommand): Promise<Confirmation> {
    return this.queue.run(async () => {
      await this.stream.handle((state) => decide(cmd, state), {
        afterAppend: async ({ events }) => {
          for (const e of events) {
            const text = confirmationNotice(this.stream.state.get(e.data.id) as Confirmation, e);
            if (text !== null) await this.chat.postConfirmation(text, e.data.id);
          }
        },
      });
      return this.view(this.stream.state.get(cmd.id) as Confirmation, this.now());
    });
  }

  private view(c: Confirmation, now: number): Confirmation {
    return { ...c, status: statusAt(c, now) };
  }
}
