import { posix } from 'node:path';
import { SandboxFact, sandboxPolicy } from '../sandbox/sandbox-policy';
import { Budget } from '../usage/budget.rules';
import { LoopThresholds } from './loops/loop-thresholds';
import { SessionRefusal, SessionDecision, refuse } from './session-refusal';
import { WorktreeCreatedData } from './session-worktree';
import { SessionFact, SessionInput } from './session.events';
import { SessionSnapshot } from './session.machine';

/** A session's creation: the facts its rules need and the rules, pure (the rest of its rules are in session.decider.ts). */

/** Why no runtime can run the request (the catalog's answer), or the one that will and its resolved command. */
export type RuntimeFact = { name: string; command: string | null } | { refusal: SessionRefusal };

/** A finding that keeps a profile from being applied: where, and what. */
export interface ProfileFinding {
  path: string;
  message: string;
}

/** The session's profile emitted for its runtime: the flags and env the worker gets it by, or why it cannot be applied. */
export type ProfileConfigFact = { args: string[]; env?: Record<string, string> } | { errors: readonly ProfileFinding[] };

/**
 * The worktree of a create with isolation `worktree`, added in the creation's turn (its name carries the alias), or
 * why none could be. `subdir`: where the request's cwd is in its checkout, so the worker starts at the same place in
 * the worktree.
 */
export type WorktreeFact = { refusal: SessionRefusal } | (Omit<WorktreeCreatedData, 'at'> & { subdir: string });

/**
 * A new session, with the facts its rules need. Each fact is looked up only when the ones before it allow: a runtime is
 * chosen in a directory, a profile is emitted for a runtime.
 */
export interface CreateSession {
  type: 'create';
  at: number;
  id: string;
  /** The alias the index of sessions numbers it with (stream `sessions`). */
  alias: string;
  /** The node that runs its worker. */
  node: string;
  title: string;
  /** The request's cwd; null for the profile's default_cwd. */
  cwd: string | null;
  /** The session's profile: named, else bound to the cwd, else the default. `deny`: its deny rules now; `loops`: its loop thresholds. */
  profile: { id: string; default_cwd: string | null; deny: string[]; loops?: Partial<LoopThresholds> };
  /** Whether the directory sessionCwd() picks is one. */
  cwd_is_directory: boolean;
  /** The runtime chosen for the request in that directory; null when there was no directory to look in. */
  runtime: RuntimeFact | null;
  /** The profile as that runtime takes it; null for runtimes that take none (command, gemini-cli), or none chosen. */
  profile_config: ProfileConfigFact | null;
  args: string[];
  env: Record<string, string>;
  excluded: boolean;
  /** The node's live sessions, and how many it may run (BRAINSTEM_MAX_SESSIONS). */
  live_sessions: number;
  max_sessions: number;
  isolation: 'none' | 'worktree';
  /** Without isolation: the git checkout the cwd is in, null outside git. */
  work_tree: string | null;
  /** With isolation `worktree`: its worktree, or why none; null when not looked up (a cwd refused before). */
  worktree: WorktreeFact | null;
  /** The request's budget, if it gave one. */
  budget?: Budget | null;
  /** Today's budget of its profile, or Brainstem's, that is spent already (in plain words); absent when none is. */
  day_budget_spent?: string | null;
  /** Whether its worker is sandboxed, and the facts of its policy but the cwd (known once the worktree is). */
  sandbox: SandboxFact;
}

/**
 * The directory a session starts in: the request's cwd, else its profile's default_cwd; absolute, since relative to
 * what the caller cannot see (the service's own directory) it would be guessed. `source` names where it came from.
 */
export function sessionCwd(requested: string | null, profile: { id: string; default_cwd: string | null }): { path: string; source: string } | { error: SessionRefusal } {
  const cwd = requested ?? (profile.default_cwd || null);
  if (cwd === null) return refuse('cwd_required', `cwd: required (profile ${profile.id} has no default_cwd)`);
  const source = requested !== null ? 'cwd' : `default_cwd of profile ${profile.id}`;
  if (!posix.isAbsolute(cwd)) return refuse('cwd_not_absolute', `${source}: must be an absolute path, not ${JSON.stringify(cwd)}`);
  return { path: posix.resolve(cwd), source };
}

/**
 * Everything is judged before anything is written: the cwd, the runtime, the profile's findings (a profile with lint
 * errors or a missing skill cannot be applied faithfully, so the session is refused rather than started without it),
 * then the node's cap on live sessions.
 */
export function decideCreate(command: CreateSession, state: SessionSnapshot | null): SessionDecision {
  if (state !== null) return refuse('conflict', `coding session ${command.id} exists already`);
  const cwd = sessionCwd(command.cwd, command.profile);
  if ('error' in cwd) return cwd;
  const shown = command.cwd ?? command.profile.default_cwd;
  if (!command.cwd_is_directory || command.runtime === null) return refuse('cwd_not_a_directory', `${cwd.source}: ${shown} does not exist or is not a directory`);
  if ('refusal' in command.runtime) return { error: command.runtime.refusal };
  const config = command.profile_config;
  if (config !== null && 'errors' in config) {
    const findings = config.errors.map((f) => `${f.path || '(profile)'}: ${f.message}`).join('; ');
    const n = config.errors.length;
    return refuse('profile_has_errors', `profile ${command.profile.id} has ${n} error(s), so the session was not started: ${findings}`, { errors: config.errors });
  }
  const worktree = command.isolation === 'worktree' ? command.worktree : null;
  if (worktree && 'refusal' in worktree) return { error: worktree.refusal };
  // Isolation asked for and no worktree to give it: never started without one.
  if (command.isolation === 'worktree' && worktree === null) return refuse('worktree_not_ready', 'isolation "worktree": no worktree could be added for the session');
  if (command.live_sessions >= command.max_sessions) {
    return refuse('max_sessions_reached', `at most ${command.max_sessions} live coding sessions (BRAINSTEM_MAX_SESSIONS)`);
  }
  if (command.day_budget_spent) return refuse('budget_exhausted', `no new session: ${command.day_budget_spent} is spent; raise it first`);
  const sandbox = command.sandbox;
  if (!sandbox.on && sandbox.required) return refuse('sandbox_unavailable', `BRAINSTEM_SANDBOX is required and this worker cannot be sandboxed: ${sandbox.reason}`);
  // The worker works in its worktree, at the place the request's cwd has in the checkout.
  const workerCwd = worktree ? posix.join(worktree.path, worktree.subdir) : cwd.path;
  const input: SessionInput = {
    id: command.id,
    alias: command.alias,
    title: command.title,
    runtime: command.runtime.name,
    profile_id: command.profile.id,
    cwd: workerCwd,
    command: command.runtime.command,
    args: command.args,
    profile_args: config?.args ?? [],
    ...(config?.env ? { profile_env: config.env } : {}),
    permission_deny: command.profile.deny,
    env: command.env,
    excluded: command.excluded,
    ...(command.profile.loops && Object.keys(command.profile.loops).length > 0 ? { loops: command.profile.loops } : {}),
    created_at: command.at,
    node: command.node,
    isolation: command.isolation,
    work_tree: worktree ? worktree.path : command.work_tree,
    ...(command.budget ? { budget: command.budget } : {}),
    sandbox: sandbox.on
      ? { on: true, policy: sandboxPolicy({ ...sandbox.facts, cwd: workerCwd, git_common_dir: worktree ? posix.join(worktree.repo, '.git') : null }) }
      : { on: false, reason: sandbox.reason },
  };
  const created: SessionFact = { type: 'session.created', at: command.at, input };
  if (!worktree) return { events: [created] };
  const { subdir: _subdir, ...data } = worktree;
  return { events: [created, { type: 'session.worktree_created', at: command.at, ...data }] };
}
