import { Logger } from '@nestjs/common';
import { Subscription, concatMap } from 'rxjs';
import { EventBus } from '../bus/event-bus';
import { DomainEventOf } from '../bus/domain-event';
import { ProfilesService } from '../profiles/profiles.service';
import { SessionsService } from '../sessions/sessions.service';
import { Budget, BudgetUnit, amount, describeCrossing } from '../usage/budget.rules';
import { dayOf } from '../usage/usage.model';
import { ChatService } from './chat.service';
import { GatedCall } from './tool-registry';

type Crossed = DomainEventOf<'session.budget_warning' | 'session.budget_exceeded'>;

/** A limit with room again: twice the one reached, or half as much again as was used if that is more; rounded up. */
export function raisedLimit(unit: BudgetUnit, limit: number, used: number): number {
  const want = Math.max(2 * limit, 1.5 * used);
  if (unit === 'usd') return Math.ceil(want * 100) / 100;
  const step = 10 ** Math.max(0, Math.floor(Math.log10(want)) - 1);
  return Math.ceil(want / step) * step;
}

/**
 * What the user is told and asked when a worker's budget is close or reached: at 80% a notice in the main chat; at the
 * limit (the worker is held, its turn interrupted) a request through the human gate to raise the budget that was reached,
 * which releases the worker once confirmed: a session's own budget (set_session_budget), its profile's for the day
 * (manage_agent_profile update); Brainstem's own day budget is configuration, so that one is a notice. Refusing leaves
 * the worker held; stopping it ends it. Each is said once (a day's budget reached holds many sessions), by the node that
 * runs the session.
 */
export class BudgetAsks {
  private sub: Subscription | null = null;
  private readonly said = new Set<string>();
  private readonly logger = new Logger('usage');

  constructor(
    private readonly bus: EventBus,
    private readonly chat: ChatService,
    private readonly ask: (call: GatedCall) => Promise<unknown>,
    private readonly sessions: SessionsService,
    private readonly profiles: ProfilesService,
    private readonly node: string,
    private readonly now: () => number,
  ) {}

  start(): void {
    this.sub = this.bus
      .ofType('session.budget_warning', 'session.budget_exceeded')
      .pipe(concatMap((e) => this.tell(e).catch((err: unknown) => this.logger.error(`a budget notice was not posted: ${(err as Error).message}`))))
      .subscribe();
  }

  stop(): void {
    this.sub?.unsubscribe();
  }

  private async tell(e: Crossed): Promise<void> {
    const s = this.sessions.find(e.stream.slice('session-'.length));
    if (!s) return;
    const status = this.sessions.status(s.id);
    if (status.node !== null && status.node !== this.node) return;
    const d = e.data;
    const who = d.scope === 'session' ? s.id : d.scope === 'profile_day' ? `${dayOf(this.now())} ${status.profile_id}` : dayOf(this.now());
    const key = `${e.type} ${d.scope} ${who} ${d.unit} ${d.limit}`;
    if (this.said.has(key)) return;
    this.said.add(key);
    const crossing = describeCrossing({ ...d, level: e.type === 'session.budget_warning' ? 'warning' : 'exceeded' });
    if (e.type === 'session.budget_warning') {
      await this.chat.postNotice(`Session ${s.alias} (${s.id}) is past 80% of ${crossing}. At the limit Brainstem holds it.`);
      return;
    }
    const held = `Brainstem held session ${s.alias} (${s.id}) when a turn reached ${crossing}, and interrupted its turn.`;
    const refuse = 'Refuse to leave it held (you can still stop it, or set another budget).';
    const raised = raisedLimit(d.unit, d.limit, d.used);
    if (d.scope === 'session') {
      const budget: Budget = { ...(status.budget ?? (await this.profileBudget(status.profile_id, 'per_session'))), [d.unit]: raised };
      const description = `Raise the budget of session ${s.alias} (${s.id}) from ${amount(d.unit, d.limit)} to ${amount(d.unit, raised)}. ${held} Confirm to raise it and let the session take turns again. ${refuse}`;
      await this.ask({ tool: 'set_session_budget', args: { session: s.id, ...budget }, description, actor: 'brainstem' });
    } else if (d.scope === 'profile_day' && status.profile_id !== null) {
      const per_day: Budget = { ...(await this.profileBudget(status.profile_id, 'per_day')), [d.unit]: raised };
      const description =
        `Raise today's budget of profile ${status.profile_id} from ${amount(d.unit, d.limit)} to ${amount(d.unit, raised)} (budget.per_day). ${held} ` +
        `So were the other sessions of that profile. Confirm to raise it and let them take turns again. ${refuse}`;
      await this.ask({ tool: 'manage_agent_profile', args: { action: 'update', profile_id: status.profile_id, profile: { budget: { per_day } } }, description, actor: 'brainstem' });
    } else {
      await this.chat.postNotice(`${held} Every other worker is held too. Raise BRAINSTEM_BUDGET_USD_PER_DAY and restart the service, or stop the sessions; tomorrow (UTC) there is room again.`);
    }
  }

  private async profileBudget(profileId: string | null, per: 'per_session' | 'per_day'): Promise<Budget> {
    if (profileId === null) return {};
    const p = await this.profiles.get(profileId).catch(() => null);
    return (p && p.error === null ? p.budget?.[per] : undefined) ?? {};
  }
}
