import { Logger } from '@nestjs/common';
import { SessionActor } from './session.actor';
import { SessionCommands } from './session.commands';
import { CreateSessionDto } from './session.dto';
import { SessionFact } from './session.events';
import { SessionProfiles } from './session-profiles.port';
import { SessionRegistry } from './session.registry';
import { SessionStatus } from './session.status';

/** How much of the parked session's task and last result the fallback's prompt carries. */
const SEED_CHARS = 4000;

const clip = (text: string): string => (text.length > SEED_CHARS ? `${text.slice(0, SEED_CHARS)}…` : text);

/** What the fallback session is asked: go on with the parked one's work, from its task and its last result. */
export function fallbackPrompt(parked: { alias: string; reason: string }, task: string | null, lastResult: string | null): string {
  return [
    `You go on with the work of session ${parked.alias}, which its model's ${parked.reason.replace('_', ' ')} stopped. Work in the same folder; its changes are there.`,
    ...(task ? ['', `Its task, as it was given:`, clip(task)] : []),
    ...(lastResult ? ['', `Its last result:`, clip(lastResult)] : []),
  ].join('\n');
}

/**
 * A worker its model's limit parked, whose profile names `on_limit.fallback_profile`, goes on at once under that
 * profile (docs/guide/usage.md#a-fallback-profile): a new session in the same folder, seeded with the parked one's
 * task and last result, under the fallback profile's own rules and budgets (a spent budget refuses it, and the parked
 * one then resumes at its reset). The parked session is kept parked, linked to it, so both never work at once.
 */
export class SessionFallbacks {
  private readonly logger = new Logger('sessions');

  constructor(
    private readonly registry: SessionRegistry,
    private readonly commands: SessionCommands,
    private readonly profiles: Pick<SessionProfiles, 'resolve'>,
    /** The first message the session was given (its task), from its journal; null when none. */
    private readonly firstMessage: (sessionId: string) => Promise<string | null>,
  ) {}

  private start: ((dto: CreateSessionDto) => Promise<SessionStatus>) | null = null;

  /** How a fallback session is started: the sessions service's create, as a user's request is. */
  startWith(start: (dto: CreateSessionDto) => Promise<SessionStatus>): void {
    this.start = start;
  }

  /** Facts journaled on a session of this node: a park by its model's limit may start its fallback. */
  facts(actor: SessionActor, facts: readonly SessionFact[]): void {
    const parked = facts.find((f) => f.type === 'session.parked');
    if (parked?.type !== 'session.parked' || (parked.source !== 'runtime' && parked.source !== 'backoff')) return;
    if (!this.registry.owns(actor) || actor.context.origin === 'external' || actor.context.parked?.fallback_session_id) return;
    this.fallBack(actor).catch((e: unknown) =>
      this.logger.error(`session ${actor.context.alias}: its profile's fallback could not start, so it resumes at its reset: ${e instanceof Error ? e.message : String(e)}`),
    );
  }

  private async fallBack(actor: SessionActor): Promise<void> {
    const c = actor.context;
    if (c.profile_id === null || this.start === null) return;
    const { doc } = await this.profiles.resolve({ profile_id: c.profile_id, cwd: null });
    const fallback = doc.on_limit?.fallback_profile;
    if (!fallback || !c.parked) return;
    const prompt = fallbackPrompt({ alias: c.alias, reason: c.parked.reason }, await this.firstMessage(c.id), c.last_result);
    const started = await this.start({
      cwd: c.cwd,
      profile_id: fallback,
      title: (c.title ? `${c.title} (goes on for ${c.alias})` : `goes on for ${c.alias}`).slice(0, 200),
      prompt,
      env: c.env,
      excluded: c.excluded,
      // In the parked session's own folder (its worktree, if it has one): the work is there.
      isolation: 'none',
    });
    await actor.run(() => this.commands.execute(actor, { type: 'keep_parked', fallback: started.id }, 'brainstem'));
    this.logger.log(`session ${c.alias}: parked at its limit; its work goes on under profile ${fallback} in ${started.alias} (${started.id})`);
  }
}
