import { Logger } from '@nestjs/common';
import { SessionActor } from '../session.actor';
import { CommandBody } from '../session.commands';
import { SessionFact } from '../session.events';
import { WorkerActivity } from '../runtimes/runtime.port';
import { LoopDetector, LoopObservation } from './loop-detector';
import { LoopPattern } from './loop-pattern';
import { LoopThresholds, detects, effectiveThresholds } from './loop-thresholds';

/** Runs a session command (the command path, in the session's mailbox). */
export type LoopCommand = (actor: SessionActor, body: CommandBody) => Promise<unknown>;

/**
 * What a session recorded, as its loop detector reads it. Every runtime's turn ends and progress reports; for the
 * command runtime, whose stream Brainstem does not read, also its signals: a permission it asks for is the call it
 * wants to make, the answer what came back, and a blocked reason, a question or a context request each a call.
 */
function observationOf(fact: SessionFact, command: boolean): LoopObservation | null {
  switch (fact.type) {
    case 'session.turn_ended':
      return fact.superseded ? null : { kind: 'turn_ended', at: fact.at, text: fact.result };
    case 'session.progress':
      return { kind: 'progress', at: fact.at, message: `${fact.status}: ${fact.message ?? ''}` };
    default:
      return command ? signalObservation(fact) : null;
  }
}

function signalObservation(fact: SessionFact): LoopObservation | null {
  const call = (tool: string, input: Record<string, unknown>, call_id: string | null = null): LoopObservation => ({ kind: 'tool_call', at: fact.at, call_id, tool, input });
  switch (fact.type) {
    case 'session.permission_requested':
      return call(fact.tool, fact.input, fact.request_id);
    case 'session.permission_resolved': {
      const output = fact.decision === 'allow' ? 'allowed' : `denied${fact.reason ? `: ${fact.reason}` : ''}`;
      return { kind: 'tool_result', at: fact.at, call_id: fact.request_id, ok: fact.decision === 'allow', exit_code: null, output };
    }
    case 'session.blocked':
      return call('notify_blocked', { reason: fact.reason });
    case 'session.asked_human':
      return call('ask_human', { question: fact.question });
    case 'session.context_requested':
      return call('request_context', { query: fact.query });
    default:
      return null;
  }
}

/**
 * The loop detectors of the sessions whose workers run on this node: one per session, made at its first observation
 * with the service's thresholds and its profile's overrides, dropped when the session exits or is released (a released
 * session starts afresh). A detection becomes the command report_loop on the session (journaled as
 * session.loop_detected unless its pattern is cooling down). Activity is never journaled: only what is detected is.
 * Called inside the session's mailbox; nothing here fails the command that fed it.
 */
export class SessionLoops {
  private readonly logger = new Logger('sessions');
  /** null: every pattern is off for the session (its profile or the service's thresholds), so nothing is looked at. */
  private readonly detectors = new Map<string, { detector: LoopDetector; limits: LoopThresholds } | null>();

  constructor(
    private readonly thresholds: LoopThresholds,
    private readonly now: () => number,
    private readonly execute: LoopCommand,
  ) {}

  /** What the worker's runtime reported it did. */
  async activity(actor: SessionActor, activity: WorkerActivity): Promise<void> {
    await this.observe(actor, { ...activity, at: this.now() });
  }

  /**
   * What the session journaled (decided on this node or on another), observed in order. Nothing to wait for unless a
   * loop is recorded: every command of a session passes here, and most observe nothing new.
   */
  facts(actor: SessionActor, facts: readonly SessionFact[]): Promise<void> | undefined {
    let recording: Promise<void> | undefined;
    for (const fact of facts) recording = recording ? recording.then(() => this.take(actor, fact)) : this.take(actor, fact);
    return recording;
  }

  private take(actor: SessionActor, fact: SessionFact): Promise<void> | undefined {
    if (fact.type === 'session.exited' || fact.type === 'session.released') {
      this.detectors.delete(actor.id);
      return undefined;
    }
    const o = observationOf(fact, actor.context.runtime === 'command');
    return o ? this.observe(actor, o) : undefined;
  }

  /** Observes; a loop detected is recorded (the promise), otherwise nothing is left to wait for. */
  private observe(actor: SessionActor, o: LoopObservation): Promise<void> | undefined {
    const c = actor.context;
    if (!actor.live) return;
    let entry = this.detectors.get(actor.id);
    if (entry === undefined) {
      const limits = effectiveThresholds(this.thresholds, c.loops);
      entry = detects(limits) ? { detector: new LoopDetector(limits), limits } : null;
      this.detectors.set(actor.id, entry);
    }
    if (entry === null) return;
    // A held session has been escalated already: its user decides; nothing more is detected until it is released.
    const quiet = (p: LoopPattern) => c.held !== null || (c.loop_cooldowns[p] ?? -Infinity) > o.at;
    const detection = entry.detector.observe(o, quiet);
    if (!detection) return;
    const { cooldown_s, escalate_after } = entry.limits;
    return this.execute(actor, { type: 'report_loop', detection, cooldown_s, escalate_after }).then(
      () => undefined,
      (e: unknown) => this.logger.error(`session ${actor.id}: a ${detection.pattern} loop was detected, but recording it failed: ${(e as Error).message}`),
    );
  }
}
