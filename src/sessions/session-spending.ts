import { Logger } from '@nestjs/common';
import { PriceTable } from '../config/price-table';
import { Budget, BudgetLine, describeCrossing, exhausted, unlimited } from '../usage/budget.rules';
import { priced } from '../usage/price-table';
import { ModelUsage, UsageTotals, turnOfRunningTotal, usageProblem } from '../usage/usage.model';
import { SessionActor } from './session.actor';
import { SessionCommands } from './session.commands';
import { BudgetFacts } from './session-budget';
import { SessionFact } from './session.events';
import { SessionProfiles } from './session-profiles.port';
import { SessionRegistry } from './session.registry';

/** What the sessions read of the usage projection: what a profile, and everything, used today (UTC). */
export interface UsageFacts {
  profileToday(profileId: string): UsageTotals;
  allToday(): { all: UsageTotals };
  /** Settles once the projection has caught up with the journal. */
  ready(): Promise<void>;
}

export interface SpendingSettings {
  /** BRAINSTEM_BUDGET_USD_PER_DAY. */
  usd_per_day: number | null;
  prices: PriceTable;
}

/** A session's worker is interrupted, when it runs here, once a hold is journaled. */
export type Interrupt = (actor: SessionActor) => void;

/**
 * What sessions spend, and the budgets that hold them: a turn's usage checked, priced and journaled with what it does
 * to the budgets (decided in session-budget.ts), a session's own budget changed, and the sessions a changed budget
 * covers checked again (a profile edited, a day's budget spent by another session, the service started with another
 * BRAINSTEM_BUDGET_USD_PER_DAY). The facts each decision needs are read here: the profile's budgets, today's totals.
 */
export class SessionSpending {
  private readonly logger = new Logger('sessions');

  constructor(
    private readonly registry: SessionRegistry,
    private readonly commands: SessionCommands,
    private readonly profiles: SessionProfiles,
    private readonly usage: UsageFacts | null,
    private readonly settings: SpendingSettings,
    private readonly interrupt: Interrupt,
  ) {}

  /**
   * A turn's usage as the runtime reported it: garbage (negative, not numbers, absurd) is logged and dropped whole,
   * never counted; the rest is priced where the runtime said no cost, and journaled. Runs in the session's mailbox.
   */
  async record(actor: SessionActor, reported: readonly ModelUsage[], cumulative = false): Promise<void> {
    // A running total (codex) is the thread's: the session's own totals are what it had used before this turn.
    const entries = cumulative ? reported.map((e) => turnOfRunningTotal(e, actor.context.usage)) : reported;
    const problem = entries.map(usageProblem).find((p) => p !== null);
    if (problem) {
      this.logger.warn(`session ${actor.id}: a turn's usage is not counted, its runtime reported ${problem}`);
      return;
    }
    const budgets = await this.facts(actor);
    const events = await this.commands.execute(actor, { type: 'record_usage', entries: entries.map((e) => priced(e, this.settings.prices)), budgets }, 'runtime');
    this.afterHold(actor, events);
  }

  /** The session's own budget set anew (null: its profile's applies); held or released as it now stands. In its mailbox. */
  async setBudget(actor: SessionActor, budget: Budget | null, by: string): Promise<void> {
    const events = await this.commands.execute(actor, { type: 'set_budget', budget, budgets: await this.facts(actor) }, by);
    this.afterHold(actor, events);
  }

  /**
   * The live agent sessions this node runs that `covers` names, checked against their budgets as they are now: held
   * when one is spent, released when it was a budget that held them and none is spent any more. Command workers report
   * no usage, so no budget holds them.
   */
  async recheck(covers: (actor: SessionActor) => boolean): Promise<void> {
    await this.usage?.ready();
    const actors = this.registry.list().filter((a) => a.live && a.context.runtime !== 'command' && this.registry.owns(a) && covers(a));
    for (const actor of actors) {
      await actor
        .run(async () => this.afterHold(actor, await this.commands.execute(actor, { type: 'check_budget', budgets: await this.facts(actor) })))
        .catch((e: unknown) => this.logger.warn(`session ${actor.id}: its budget was not checked again: ${(e as Error).message}`));
    }
  }

  /** Today's budget of the profile, or Brainstem's, when it is spent already (in plain words): a new session is refused. */
  async daySpent(profileId: string): Promise<string | null> {
    const facts = await this.facts({ context: { profile_id: profileId } });
    const lines: BudgetLine[] = [];
    if (facts.profile_day) lines.push({ scope: 'profile_day', ...facts.profile_day });
    if (facts.global_day) lines.push({ scope: 'global_day', ...facts.global_day });
    const spent = exhausted(lines);
    return spent ? describeCrossing(spent) : null;
  }

  /** The budgets beyond the session's own, and what their scopes used today: read when a command is decided. */
  async facts(actor: { context: { profile_id: string | null } }): Promise<BudgetFacts> {
    await this.usage?.ready();
    const profileId = actor.context.profile_id;
    const profile = profileId === null ? null : await (this.profiles.budgets?.(profileId) ?? Promise.resolve(null)).catch(() => null);
    const perDay = profile?.per_day;
    return {
      profile_session: profile?.per_session ?? null,
      profile_day: profileId !== null && this.usage && perDay && !unlimited(perDay) ? { budget: perDay, used: this.usage.profileToday(profileId) } : null,
      global_day: this.usage && this.settings.usd_per_day !== null ? { budget: { usd: this.settings.usd_per_day }, used: this.usage.allToday().all } : null,
    };
  }

  /**
   * A hold just journaled interrupts the worker's turn under way; a day's budget spent holds the other sessions it
   * covers too (checked in their own mailboxes, after this one's).
   */
  private afterHold(actor: SessionActor, events: readonly SessionFact[]): void {
    if (events.some((e) => e.type === 'session.held')) this.interrupt(actor);
    const exceeded = events.find((e): e is Extract<SessionFact, { type: 'session.budget_exceeded' }> => e.type === 'session.budget_exceeded');
    if (!exceeded || exceeded.scope === 'session') return;
    const profileId = actor.context.profile_id;
    const covers = exceeded.scope === 'global_day' ? () => true : (a: SessionActor) => a.context.profile_id === profileId;
    setImmediate(() => void this.recheck((a) => a.id !== actor.id && a.context.held === null && covers(a)));
  }
}
