import { Logger } from '@nestjs/common';
import { SessionActor } from './session.actor';
import { SessionCommands } from './session.commands';
import { SessionFact } from './session.events';
import { LimitSettings, ParkedEntry, resumeSchedule } from './session-limit.model';
import { SessionRegistry } from './session.registry';
import type { SessionWorkers } from './session-workers';

/** A resume whose worker is not ready yet is tried again this often, this many times, before it waits for someone. */
const NOT_READY_RETRY_MS = 1000;
const NOT_READY_RETRIES = 30;

/** Facts that change whether, or when, a session of this node resumes from its limit. */
const RESCHEDULES: ReadonlySet<string> = new Set(['session.parked', 'session.unparked', 'session.message_dispatched', 'session.exited', 'session.held', 'session.released', 'session.recovered']);

/** Sessions on one account and one limit: the same runtime, profile, kind of limit and named limit. */
const keyOf = (actor: SessionActor): string => {
  const c = actor.context;
  return JSON.stringify([c.runtime, c.profile_id, c.parked?.reason ?? null, c.parked?.limit_type ?? null]);
};

/**
 * The resume timers of this node's parked sessions (docs/guide/usage.md#usage-limits): armed from the journaled
 * `resumes_at` (so a restart, or facts another node journaled, re-arm them), staggered per account and limit
 * (resumeSchedule), and each one a command on the one path: resume_parked, then the worker gets its message.
 */
export class SessionParking {
  private readonly logger = new Logger('sessions');
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  /** Per key, when the latest resumes went (at most a batch of them): the next batch waits for them. */
  private readonly resumed = new Map<string, number[]>();
  /** A resume that found its worker unable to take it, by its resumes_at: not tried again until it parks anew. */
  private readonly stuck = new Map<string, number>();
  /** Resumes that found the worker not ready yet (a restart still bringing it back), by session: tried again shortly. */
  private readonly retries = new Map<string, number>();
  private pending = false;
  private released = false;

  constructor(
    private readonly registry: SessionRegistry,
    private readonly commands: SessionCommands,
    private readonly workers: Pick<SessionWorkers, 'reachOf' | 'deliver'>,
    private readonly settings: LimitSettings,
  ) {}

  /** Once the workers are recovered: timers for every session parked before the restart, and for facts from other nodes. */
  start(): void {
    this.registry.onForeignEvent((_actor, event) => this.facts([event]));
    this.refresh();
  }

  release(): void {
    this.released = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** Facts journaled on a session of this node: a park, a resume, an exit… reschedules (once per tick, however many). */
  facts(facts: readonly SessionFact[]): void {
    if (this.pending || this.released || !facts.some((f) => RESCHEDULES.has(f.type))) return;
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      this.refresh();
    });
  }

  /** The parked sessions of this node, each armed for its turn in the schedule. */
  refresh(): void {
    if (this.released) return;
    const entries: ParkedEntry[] = [];
    const actors = new Map<string, SessionActor>();
    for (const actor of this.registry.list()) {
      const p = actor.context.parked ?? null;
      if (p === null || p.resumes_at === null || !actor.live || !this.registry.owns(actor) || actor.context.held !== null) continue;
      if (this.stuck.get(actor.id) === p.resumes_at) continue;
      entries.push({ id: actor.id, key: keyOf(actor), resumes_at: p.resumes_at, since: p.since });
      actors.set(actor.id, actor);
    }
    const schedule = resumeSchedule(entries, this.settings, this.resumed);
    for (const [id, armed] of this.timers) {
      if (schedule.get(id) === armed.at) continue;
      clearTimeout(armed.timer);
      this.timers.delete(id);
    }
    for (const [id, at] of schedule) {
      if (this.timers.has(id)) continue;
      const actor = actors.get(id)!;
      // At most a day away (the clamp), well inside what a Node timer holds.
      const timer = setTimeout(() => this.fire(actor, at), Math.max(0, at - this.commands.now()));
      timer.unref();
      this.timers.set(id, { at, timer });
    }
  }

  private rearm(actor: SessionActor, at: number): void {
    if (this.released || this.timers.has(actor.id)) return;
    const timer = setTimeout(() => this.fire(actor, at), NOT_READY_RETRY_MS);
    timer.unref();
    this.timers.set(actor.id, { at, timer });
  }

  private fire(actor: SessionActor, at: number): void {
    this.timers.delete(actor.id);
    const key = keyOf(actor);
    const resumesAt = actor.context.parked?.resumes_at ?? null;
    // Planned now (a retry was counted when it was first planned).
    if (!this.retries.has(actor.id)) this.resumed.set(key, [...(this.resumed.get(key) ?? []), at].slice(-Math.max(1, this.settings.resume_batch)));
    actor
      .run(async () => {
        const events = await this.commands.execute(actor, { type: 'resume_parked', by: 'timer', worker: this.workers.reachOf(actor) });
        // The stagger counts from when it did resume (a busy node journals it later than planned), not from the plan.
        const unparked = events.find((e) => e.type === 'session.unparked');
        const went = this.resumed.get(key) ?? [];
        const planned = went.indexOf(at);
        if (unparked && planned >= 0) this.resumed.set(key, went.map((t, i) => (i === planned ? Math.max(at, unparked.at) : t)));
        const sent = events.find((e) => e.type === 'session.message_dispatched');
        if (sent) {
          this.retries.delete(actor.id);
          this.workers.deliver(actor, sent.text);
          this.logger.log(`session ${actor.context.alias}: its limit reset, resumed`);
        } else if (actor.context.parked && resumesAt !== null && (this.retries.get(actor.id) ?? 0) < NOT_READY_RETRIES) {
          // Its worker is still coming back (a restart recovers it): the timer goes again in a moment.
          this.retries.set(actor.id, (this.retries.get(actor.id) ?? 0) + 1);
          this.rearm(actor, at);
        } else if (actor.context.parked && resumesAt !== null) {
          this.retries.delete(actor.id);
          this.stuck.set(actor.id, resumesAt);
          this.logger.warn(`session ${actor.context.alias}: its limit reset, but its worker cannot take the resume; it stays parked until someone resumes it`);
        }
      })
      .catch((e: unknown) => this.logger.error(`session ${actor.id}: resume at its limit's reset failed: ${(e as Error).message}`))
      .finally(() => this.refresh());
  }
}
