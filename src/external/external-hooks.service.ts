import { Logger } from '@nestjs/common';
import { basename } from 'node:path';
import { Subscription } from 'rxjs';
import { EventBus } from '../bus/event-bus';
import { DomainError } from '../common/domain-error';
import { ExternalLine } from '../sessions/external-line';
import { ExternalClaim } from '../sessions/external-sessions';
import { findTranscript, projectsDir, transcriptUnder } from '../sessions/external-transcript';
import { SessionActor } from '../sessions/session.actor';
import { SessionStatus } from '../sessions/session.status';
import { SessionsService } from '../sessions/sessions.service';
import { SupervisionService } from '../supervision/supervision.service';
import { AgentsListing, ClaudeAgent, RunProgram, listClaudeAgents } from './claude-agents';
import { ClaudeHookEvent, parseHookReport } from './claude-hook-event';
import { hookReportOf } from './hook-reports';
import { HookDecision, HookWaits } from './hook-waits';

export interface ExternalSettings {
  /** Where claude keeps its transcripts (its home): the only place an external session's output is read from. */
  home: string;
  stop_wait_s: number;
  permission_wait_s: number;
}

/** What a hook is answered at once: its session, and whether (and how long) it may wait for a decision. */
export interface ReportAnswer {
  session: { id: string; alias: string; state: string };
  wait: { id: string; timeout_s: number } | null;
}

const ROUND_ENDS = new Set(['round.completed', 'round.timed_out', 'round.interrupted', 'round.failed']);

/**
 * The claude hooks' side of external sessions (docs/guide/external-sessions.md): each report is checked, bound to its
 * claude session and recorded (src/sessions/external-sessions.ts), and answered at once. A supervised session's Stop
 * and PermissionRequest are answered with a wait: the hook then asks for the decision, which comes when the brain sends
 * the session a message (claude goes on with it), when its request is answered, or never (the round ended, supervision
 * turned off, the wait ran out: claude goes on as if no hook were installed). Nothing a hook sends is ever executed.
 */
export class ExternalHooksService {
  private readonly logger = new Logger('external');
  private readonly waits: HookWaits;
  private sub: Subscription | null = null;

  constructor(
    private readonly sessions: SessionsService,
    private readonly supervision: SupervisionService,
    private readonly bus: EventBus,
    private readonly settings: ExternalSettings,
    newId: () => string,
    private readonly run: RunProgram,
  ) {
    this.waits = new HookWaits(newId);
  }

  /** Follows what ends a Stop hook's wait: its round's end, supervision turned off, the session left the scope. */
  start(): void {
    this.sub = this.bus.events$.subscribe((e) => {
      const d = e.data as Record<string, unknown>;
      if (e.type === 'round.started') {
        const round = d.round as { id: string; reasons: Array<{ session_id: string }> };
        this.waits.roundStarted(round.id, new Set(round.reasons.map((r) => r.session_id)));
      } else if (ROUND_ENDS.has(e.type)) this.waits.roundEnded(String(d.round_id));
      else if (e.type === 'supervision.disabled') this.waits.endFor();
      else if (e.type === 'session.exclusion_changed' && d.excluded === true) this.waits.endFor(e.stream.slice('session-'.length));
    });
  }

  stop(): void {
    this.sub?.unsubscribe();
    this.waits.endFor();
  }

  /** A hook's event (`name`: the event it was installed for): recorded on its session, answered with its wait if any. */
  async report(name: string, body: unknown): Promise<ReportAnswer> {
    const { event, claude_pid } = parseHookReport(name, body);
    const claim: ExternalClaim = {
      claude_session_id: event.session_id,
      transcript_path: this.transcriptOf(event),
      cwd: event.cwd,
      pid: claude_pid,
      starts: event.name === 'SessionStart',
    };
    let wait: ReportAnswer['wait'] = null;
    const reported = await this.sessions.externals.report(claim, hookReportOf(event), {
      // Opened before the stop is recorded, in the session's mailbox: no round and no message can come before it. A
      // supervised session is live, and every live state takes a stop.
      before: (actor) => {
        if (event.name === 'Stop' && this.supervises(actor)) wait = this.openStop(actor);
      },
      // Opened in the mailbox too, before any answer to the request can be decided.
      after: (r) => {
        if (event.name === 'PermissionRequest' && r.request_id !== null && this.supervises(r.actor)) wait = this.openPermission(r.actor, r.request_id);
      },
    });
    const a = reported.actor;
    return { session: { id: a.id, alias: a.context.alias, state: a.state }, wait };
  }

  /** The decision a waiting hook answers claude with, once there is one; null: none (claude goes on as usual). */
  async decision(waitId: string): Promise<{ decision: HookDecision | null }> {
    return { decision: await this.waits.outcome(waitId) };
  }

  /** claude's agents, with the Brainstem session each is (when its hooks reported, or it was adopted). */
  async agents(): Promise<AgentsListing & { agents?: Array<ClaudeAgent & { brainstem_session: string | null }> }> {
    const listing = await listClaudeAgents(this.run);
    if (!listing.available) return listing;
    return { available: true, agents: listing.agents.map((a) => ({ ...a, brainstem_session: this.sessions.externals.find(a.session_id)?.id ?? null })) };
  }

  /**
   * Adopts one of claude's agents (by its id or session id): its external session, created now if its hooks have not
   * reported yet, joins supervision (the user's choice).
   */
  async adopt(ref: string): Promise<SessionStatus> {
    const listing = await listClaudeAgents(this.run);
    if (!listing.available) throw new DomainError('not_found', `no claude agent ${JSON.stringify(ref.slice(0, 64))}: ${listing.reason}`);
    const agent = listing.agents.find((a) => a.id === ref || a.session_id === ref);
    if (!agent) throw new DomainError('not_found', `no claude agent ${JSON.stringify(ref.slice(0, 64))} (claude agents --json lists ${listing.agents.length})`);
    if (agent.cwd === null || !agent.cwd.startsWith('/')) throw new DomainError('invalid_input', `claude agent ${agent.id} names no absolute working folder`);
    const actor = await this.sessions.externals.adopt({ claude_session_id: agent.session_id, transcript_path: findTranscript(this.settings.home, agent.session_id), cwd: agent.cwd, pid: agent.pid });
    await this.sessions.setExcluded(actor.id, false);
    return this.sessions.status(actor.id);
  }

  private supervises(actor: SessionActor): boolean {
    return this.supervision.isOn() && !actor.context.excluded && actor.handle instanceof ExternalLine;
  }

  private openStop(actor: SessionActor): ReportAnswer['wait'] {
    const line = actor.handle as ExternalLine;
    const { outcome, end } = line.waitForMessage();
    const decided = outcome.then((text): HookDecision | null => (text === null ? null : { kind: 'continue', text }));
    const timeout_s = this.settings.stop_wait_s;
    return { id: this.waits.open('stop', actor.id, decided, end, timeout_s), timeout_s };
  }

  private openPermission(actor: SessionActor, requestId: string): ReportAnswer['wait'] {
    const line = actor.handle as ExternalLine;
    const { outcome, end } = line.waitForAnswer(requestId);
    const decided = outcome.then((a): HookDecision | null => (a === null ? null : { kind: 'permission', behavior: a.decision, message: a.reason }));
    const timeout_s = this.settings.permission_wait_s;
    return { id: this.waits.open('permission', actor.id, decided, end, timeout_s), timeout_s };
  }

  /** The transcript a hook names, when it is this session's (`<session id>.jsonl`) under ~/.claude/projects; else none. */
  private transcriptOf(event: ClaudeHookEvent): string | null {
    const path = event.transcript_path;
    if (path === null || basename(path) !== `${event.session_id}.jsonl`) return null;
    const under = transcriptUnder(this.settings.home, path);
    if (under === null) this.logger.warn(`claude session ${event.session_id}: transcript ${path} is not under ${projectsDir(this.settings.home)}; it is not read`);
    return under;
  }

}
