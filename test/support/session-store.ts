import { Journal } from '../../src/journal/journal.port';
import { SessionActor } from '../../src/sessions/session.actor';
import { CreateBody, SessionCommands } from '../../src/sessions/session.commands';
import { SessionEnvStore } from '../../src/sessions/session-env.store';
import { Clock, systemClock } from '../../src/sessions/session.ports';
import { RetentionOptions, SessionRegistry } from '../../src/sessions/session.registry';

/** The sessions' registry and their command path on a journal, without workers: what the session streams hold. */
export interface SessionStore {
  registry: SessionRegistry;
  commands: SessionCommands;
  /** Creates a session as a request that passed every check does (journaled at once, its alias numbered with it). */
  create(over: Partial<CreateBody> & { id: string }): Promise<SessionActor>;
  /** Records the worker's start, as a launch without a prompt does. */
  start(actor: SessionActor, pid?: number | null): Promise<unknown>;
}

export function sessionStore(journal: Journal, envs: SessionEnvStore, options: RetentionOptions = {}, clock: Clock = systemClock): SessionStore {
  const registry = new SessionRegistry(journal, envs, options);
  const commands = new SessionCommands(journal, registry, clock);
  return {
    registry,
    commands,
    create: (over) =>
      commands.create({
        title: '',
        cwd: '/tmp',
        profile: { id: 'test-profile', default_cwd: null, deny: [] },
        cwd_is_directory: true,
        runtime: { name: 'command', command: null },
        profile_config: null,
        args: [],
        env: {},
        excluded: false,
        max_sessions: 100,
        isolation: 'none',
        work_tree: null,
        worktree: null,
        sandbox: { on: false, reason: 'BRAINSTEM_SANDBOX is off', required: false },
        node: registry.nodes.self,
        ...over,
      }),
    start: (actor, pid = null) =>
      actor.run(() => commands.execute(actor, { type: 'launch', spawn: { pid, pid_start_time: null, idle: false }, prompt: null, worker: 'ready' })),
  };
}
