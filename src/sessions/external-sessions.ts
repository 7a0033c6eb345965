import { Logger } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { SerialQueue } from '../common/serial-queue';
import { ExternalLine } from './external-line';
import { ExternalReport } from './external-session.decider';
import { SessionActor } from './session.actor';
import { SessionCommands } from './session.commands';
import { JsonObject, SessionFact } from './session.events';
import { IdGenerator } from './session.ports';
import { SessionRegistry } from './session.registry';
import { SessionSetup } from './session-setup';
import { ProcessRunner } from './runtimes/process-runner';

/** Who a hook says it speaks for: a claude session, and the claude process that runs it (its pid, where known). */
export interface ExternalClaim {
  claude_session_id: string;
  /** Checked already: under ~/.claude/projects, or null. */
  transcript_path: string | null;
  cwd: string;
  pid: number | null;
  /** A SessionStart: from now on the process speaks for this session (after a /clear or a /resume, no longer the one before). */
  starts: boolean;
}

/** What a hook's event reports, beside its claim (the run of claude it names is recorded from the claim). */
export type HookReport = Exclude<ExternalReport, { kind: 'run' | 'permission' }> | { kind: 'permission'; tool: string; input: JsonObject; prompt_only?: boolean };

/** What the caller does in the session's mailbox around the report's event: nothing can come between. */
export interface AroundReport {
  /** After the claim is bound, before the event is decided (a hook's wait opens here: no message can come before it). */
  before?(actor: SessionActor): void;
  after?(reported: Reported): void;
}

export interface Reported {
  actor: SessionActor;
  facts: SessionFact[];
  /** The permission request the report raised, if any. */
  request_id: string | null;
}

/**
 * External sessions: claude sessions started outside Brainstem that report through its hooks. The first report of a
 * claude session creates its Brainstem session; each report after it is bound to it. A session is bound to the claude
 * process that runs it (pid and start time) and a process to the session it speaks for: while that process lives, no
 * other process may report for the session, and the process may report for no other session until its own SessionStart
 * names a new one. The process is watched by its pid: once gone, the session is exited (a resume opens it again).
 */
export class ExternalSessions {
  private readonly logger = new Logger('sessions');
  /** Find-or-create, one at a time: two hooks of a new session must not create it twice. */
  private readonly creations = new SerialQueue();

  constructor(
    private readonly registry: SessionRegistry,
    private readonly commands: SessionCommands,
    private readonly setup: SessionSetup,
    private readonly runner: ProcessRunner,
    private readonly ids: IdGenerator,
    /** Whether a session created now starts excluded from supervision (the user's choice, see the supervision scope). */
    private readonly excludedAtCreate: () => boolean,
  ) {}

  /** After a restart: each live external session whose claude still runs is watched again; one whose claude is gone exited. */
  async start(): Promise<void> {
    for (const actor of this.registry.list()) {
      if (actor.live && actor.context.origin === 'external' && this.registry.owns(actor)) {
        await actor.run(async () => {
          const { pid, pid_start_time } = actor.context;
          if (pid !== null && !this.runner.isAlive(pid, pid_start_time)) await this.execute(actor, { kind: 'gone' });
          else this.attach(actor);
        });
      }
    }
  }

  /** The session a claude session id has in memory. */
  find(claudeSessionId: string): SessionActor | undefined {
    return this.registry.findExternal(claudeSessionId);
  }

  /** A hook's report: its session (created at the first report), bound to the process it names, then its event. */
  async report(claim: ExternalClaim, report: HookReport | null, around: AroundReport = {}): Promise<Reported> {
    const actor = await this.sessionOf(claim);
    return actor.run(async () => {
      const pid_start_time = claim.pid === null ? null : this.runner.startTime(claim.pid);
      // A pid that no longer runs (or never did) proves nothing: the process is unknown.
      const pid = pid_start_time === null ? null : claim.pid;
      await this.bind(actor, claim, pid, pid_start_time);
      const c = actor.context;
      const newProcess = pid !== c.pid || pid_start_time !== c.pid_start_time;
      // A session that ended opens again only for a run of claude: a SessionStart (a resume) or another process.
      const runs = actor.state === 'starting' || newProcess || (actor.state === 'exited' && claim.starts);
      const facts = runs ? await this.execute(actor, { kind: 'run', pid, pid_start_time }) : [];
      if (actor.live && (facts.length > 0 || !actor.handle)) this.attach(actor);
      around.before?.(actor);
      const full: ExternalReport | null = report?.kind === 'permission' ? { ...report, request_id: this.ids.requestId() } : report;
      const more = full === null ? [] : await this.execute(actor, full);
      const raised = more.find((f) => f.type === 'session.permission_requested');
      const reported: Reported = { actor, facts: [...facts, ...more], request_id: raised?.type === 'session.permission_requested' ? raised.request_id : null };
      around.after?.(reported);
      return reported;
    });
  }

  /** A report on the command path; a session it ends lets go of its claude (the hooks still waiting, the pid watch). */
  private async execute(actor: SessionActor, report: ExternalReport): Promise<SessionFact[]> {
    const facts = await this.commands.execute(actor, { type: 'report_external', report }, 'hook');
    if (!actor.live && actor.handle) {
      actor.handle.release();
      actor.handle = null;
    }
    return facts;
  }

  /**
   * A claude session adopted from claude's list of agents before any hook of it reported: its session, created as a
   * first report would create it (a report later lands in it, since it is bound to the claude session id).
   */
  async adopt(claim: Omit<ExternalClaim, 'starts'>): Promise<SessionActor> {
    return (await this.report({ ...claim, starts: false }, null)).actor;
  }

  private sessionOf(claim: ExternalClaim): Promise<SessionActor> {
    return this.creations.run(async () => {
      const found = this.registry.findExternal(claim.claude_session_id);
      if (found) return found;
      const profile = await this.setup.boundProfile(claim.cwd);
      return this.commands.createExternal({
        id: this.ids.sessionId(),
        node: this.registry.nodes.self,
        claude_session_id: claim.claude_session_id,
        transcript_path: claim.transcript_path,
        cwd: claim.cwd,
        profile,
        excluded: this.excludedAtCreate(),
      });
    });
  }

  /** The bindings (see the class): refused with 403 when the report comes from a process that is not this session's. */
  private async bind(actor: SessionActor, claim: ExternalClaim, pid: number | null, startTime: string | null): Promise<void> {
    const c = actor.context;
    const refuse = (why: string) => new DomainError('permission_denied', `a hook of claude process ${pid ?? '(unknown)'} may not report for claude session ${claim.claude_session_id}: ${why}`);
    const bound = c.external?.transcript_path ?? null;
    if (bound !== null && claim.transcript_path !== bound) throw refuse(`that session's transcript is ${bound}, not ${claim.transcript_path ?? 'none'}`);
    const sameProcess = pid === c.pid && startTime === c.pid_start_time;
    if (actor.live && !sameProcess && c.pid !== null && this.runner.isAlive(c.pid, c.pid_start_time)) {
      throw refuse(`it is bound to claude process ${c.pid}, which still runs`);
    }
    if (pid === null) return;
    for (const other of this.registry.list()) {
      if (other === actor || !other.live || other.context.origin !== 'external' || other.context.pid !== pid || other.context.pid_start_time !== startTime) continue;
      if (!claim.starts) throw refuse(`that process speaks for claude session ${other.context.external?.claude_session_id} (${other.context.alias})`);
      // The process moved on (/clear, /resume): the session it ran before has ended.
      await other.run(() => this.execute(other, { kind: 'ended' }));
    }
  }

  /** A new hold on the session's claude, watched by its pid; the one before it lets its waiting hooks go. */
  private attach(actor: SessionActor): void {
    const { pid, pid_start_time } = actor.context;
    actor.handle?.release();
    const gone = () => {
      actor
        .run(() => this.execute(actor, { kind: 'gone' }))
        .catch((e: unknown) => this.logger.error(`session ${actor.id}: its claude's end not recorded: ${(e as Error).message}`));
    };
    actor.handle = new ExternalLine(pid, pid_start_time, this.runner, gone);
  }
}
