import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { Describe } from '../common/dto-schema';
import { SessionRef } from '../sessions/session.dto';
import { SessionsService } from '../sessions/sessions.service';
import { BudgetDto, budgetOf } from '../usage/budget.dto';
import { Budget, amount } from '../usage/budget.rules';
import { UsageQueryDto } from '../usage/usage.dto';
import { UsageService } from '../usage/usage.service';
import { ToolRegistry } from './tool-registry';

/** Rows usage_report answers unless asked: the dearest first. */
const REPORT_ROWS = 50;

class UsageReportArgs extends UsageQueryDto {
  @IsOptional() @IsInt() @Min(1) @Max(1000) @Describe(`How many rows, the dearest first (default ${REPORT_ROWS}); group_by day keeps the days in order.`) limit?: number;
}

class SessionBudgetArgs extends BudgetDto {
  @SessionRef() @Describe('A cs_ session id or its alias (w1, w2, …).') session!: string;
}

/** A budget in words: "10,000 tokens and $2.00", or "none (its profile's applies)". */
function budgetWords(b: { tokens?: number; usd?: number } | null): string {
  const parts = [b?.tokens !== undefined ? amount('tokens', b.tokens) : null, b?.usd !== undefined ? amount('usd', b.usd) : null].filter((p) => p !== null);
  return parts.length > 0 ? parts.join(' and ') : "none of its own (its profile's per-session budget applies, if it has one)";
}

/** Two budgets that allow the same: each limit alike, none (null or no limit) alike. */
function sameBudget(a: Budget | null, b: Budget | null): boolean {
  return a?.tokens === b?.tokens && a?.usd === b?.usd;
}

/**
 * What workers and the brain spent (usage_report), and the one way the brain may ask for more: set_session_budget,
 * which always waits for the user, since only the user widens what may be spent.
 */
export function registerUsageTools(registry: ToolRegistry, usage: UsageService, sessions: SessionsService): void {
  registry.register<UsageReportArgs>({
    name: 'usage_report',
    audience: 'main_brain',
    description:
      'Tokens and dollars spent, from the usage totals Brainstem keeps: group_by session, profile, day (UTC), brain (your own conversations) or workflow; ' +
      'since and until are UTC days (YYYY-MM-DD), each included. Costs marked cost_estimated come from the price table, not the runtime.',
    parameters: UsageReportArgs,
    handler: (a) => {
      const report = usage.report(a.group_by, { since: a.since ?? null, until: a.until ?? null });
      const limit = a.limit ?? REPORT_ROWS;
      const rows = a.group_by === 'day' ? report.rows.slice(-limit) : [...report.rows].sort((x, y) => y.cost_usd - x.cost_usd || y.tokens - x.tokens).slice(0, limit);
      return { ...report, rows, omitted: report.rows.length - rows.length };
    },
  });

  registry.register<SessionBudgetArgs>({
    name: 'set_session_budget',
    audience: 'main_brain',
    description:
      "Set a session's own budget (tokens and/or usd; a limit left out is none). Only the user changes what may be spent: the call answers " +
      'waiting_for_user, and the user confirms or refuses it (a budget the session has already is answered at once, unchanged). A session its budget held is released once the budget has room again.',
    parameters: SessionBudgetArgs,
    unchanged: (a) => {
      const s = sessions.status(a.session);
      if (!sameBudget(s.budget, budgetOf(a))) return null;
      return { answer: { id: s.id, alias: s.alias, budget: s.budget, usage: s.usage, held: s.held, unchanged: `the budget of session ${s.alias} is ${budgetWords(s.budget)} already` } };
    },
    irreversible: (a) => {
      const s = sessions.status(a.session);
      const used = `${amount('tokens', s.usage.tokens)} and ${amount('usd', s.usage.cost_usd)} used so far`;
      const held = s.held?.reason === 'budget' ? ` It is held for its budget (${s.held.detail}); with room again it is released.` : '';
      return `Set the budget of session ${s.alias} (${s.id}) to ${budgetWords(budgetOf(a))}, from ${budgetWords(s.budget)}; ${used}.${held}`;
    },
    handler: async (a) => {
      const s = await sessions.setBudget(a.session, budgetOf(a), 'user');
      return { id: s.id, alias: s.alias, budget: s.budget, usage: s.usage, held: s.held };
    },
  });
}
