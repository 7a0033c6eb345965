import { PriceTable } from '../../config/price-table';
import { BudgetLine, Crossing, describeCrossing, exhausted } from '../../usage/budget.rules';
import { priced } from '../../usage/price-table';
import { ModelUsage, PricedUsage, UsageTotals, turnOfRunningTotal, usageProblem } from '../../usage/usage.model';
import { BrainBudgetCrossing, BrainCommand, BrainDecided } from './brain-conversation';

/** What the brain reads of the usage projection: what it, and everything, used today (UTC). */
export interface BrainUsageFacts {
  allToday(): { brain: UsageTotals; all: UsageTotals };
  /** What a conversation of the brain used so far. */
  conversation(id: string): UsageTotals;
  ready(): Promise<void>;
}

export interface BrainBudgetSettings {
  /** BRAINSTEM_MAIN_BRAIN_BUDGET_USD. */
  brain_usd_per_day: number | null;
  /** BRAINSTEM_BUDGET_USD_PER_DAY. */
  usd_per_day: number | null;
  prices: PriceTable;
}

/**
 * The hosted brain's spending: its turns' usage checked and priced, and the day budgets that stop it (its own and
 * Brainstem's). Read from the usage projection when a turn is to start and when its usage is journaled.
 */
export class BrainSpending {
  /** The budget that last stopped the brain (day, scope, limit): the chat is told once. */
  private stoppedBy: string | null = null;

  constructor(
    private readonly usage: BrainUsageFacts,
    private readonly settings: BrainBudgetSettings,
  ) {}

  /** The day budgets that apply to the brain, with what their scopes used today. */
  lines(): BudgetLine[] {
    const today = this.usage.allToday();
    const lines: BudgetLine[] = [];
    if (this.settings.brain_usd_per_day !== null) lines.push({ scope: 'brain_day', budget: { usd: this.settings.brain_usd_per_day }, used: today.brain });
    if (this.settings.usd_per_day !== null) lines.push({ scope: 'global_day', budget: { usd: this.settings.usd_per_day }, used: today.all });
    return lines;
  }

  /** The budget that keeps the brain from its next turn, or null while every budget has room. */
  spent(): Crossing | null {
    return exhausted(this.lines());
  }

  /** Why the brain takes no turn now, and whether the chat is yet to be told (once per day and limit); null: it may. */
  stopped(now: number): { reason: string; tell: boolean } | null {
    const spent = this.spent();
    if (!spent) return null;
    const key = `${new Date(now).toISOString().slice(0, 10)} ${spent.scope} ${spent.limit}`;
    const tell = this.stoppedBy !== key;
    this.stoppedBy = key;
    return { reason: brainBudgetNotice(spent, 'exceeded'), tell };
  }

  /** A turn's usage as the command that journals it (priced, with the day budgets as they stood), or why it cannot be counted. */
  async usageCommand(turnId: string, reported: readonly ModelUsage[], running: { conversation_id: string } | null): Promise<BrainCommand | { problem: string }> {
    await this.usage.ready();
    // A running total (codex) is the conversation's: what it used before is the projection's.
    const before = running ? this.usage.conversation(running.conversation_id) : null;
    const entries = before ? reported.map((e) => turnOfRunningTotal(e, before)) : reported;
    const problem = entries.map(usageProblem).find((p) => p !== null);
    if (problem) return { problem };
    const checked: PricedUsage[] = entries.map((e) => priced(e, this.settings.prices));
    return { type: 'record_usage', turn_id: turnId, entries: checked, budgets: this.lines() };
  }
}

/** What the chat is told of a decided event of the brain's spending; null for the others. */
export function budgetNotice(e: BrainDecided): string | null {
  if (e.type === 'brain.budget_warning') return brainBudgetNotice(e.data, 'warning');
  if (e.type === 'brain.budget_exceeded') return brainBudgetNotice(e.data, 'exceeded');
  return null;
}

const WHAT_RAISES: Record<string, string> = {
  brain_day: 'BRAINSTEM_MAIN_BRAIN_BUDGET_USD',
  global_day: 'BRAINSTEM_BUDGET_USD_PER_DAY',
};

/** What the chat is told when the brain's budget stops it, and when a turn took it past 80%. */
export function brainBudgetNotice(c: BrainBudgetCrossing, level: 'warning' | 'exceeded'): string {
  const crossing = describeCrossing({ ...c, level });
  if (level === 'warning') return `The main brain is past 80% of ${crossing}. At the limit it stops taking turns.`;
  return (
    `The main brain takes no more turns (rounds or chat): ${crossing} is spent. ` +
    `It takes them again tomorrow (UTC), or once ${WHAT_RAISES[c.scope] ?? 'the budget'} is raised and the service restarted; what arrives meanwhile waits.`
  );
}
