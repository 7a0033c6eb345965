import type { EmittedFile } from '../profiles/emitters/emitter.types';
import type { ProfileBudget } from '../profiles/profile-budget.schema';
import type { ProfileDoc } from '../profiles/profile.schema';
import type { ProfileFinding } from './session-create.decider';

/** The runtimes a session's profile reaches by flags and files of its own (gemini-cli has no per-run way to take one). */
export type ConfiguredRuntime = 'claude-code' | 'codex' | 'opencode';

export const CONFIGURED_RUNTIMES: readonly string[] = ['claude-code', 'codex', 'opencode'] satisfies ConfiguredRuntime[];

/** What sessions need of Agent Profiles; the sessions module wires it to the profiles feature. */
export interface SessionProfiles {
  /**
   * The profile a session runs with: the one named, else the one bound to the cwd or its nearest ancestor, else the
   * default. Refused (unknown_profile) when it does not exist or does not parse.
   */
  resolve(request: { profile_id: string | null; cwd: string | null }): Promise<{ id: string; doc: ProfileDoc }>;
  /** The profile emitted for a runtime in a project directory, and the findings that keep it from being applied as it is. */
  emission(profileId: string, runtime: ConfiguredRuntime, projectDir: string): Promise<{ doc: ProfileDoc; files: readonly EmittedFile[]; errors: readonly ProfileFinding[] }>;
  /** The profile's deny rules now (sessionDenyRules); null when it cannot be read. */
  denyRules(profileId: string): Promise<string[] | null>;
  /** The profile's budgets now (per session, per day); null when it sets none or cannot be read. Absent: no profile budgets. */
  budgets?(profileId: string): Promise<ProfileBudget | null>;
  /**
   * Whether the profile lets a sandboxed session's Bash run without asking (`sandbox.auto_allow_bash`, default on), and
   * its ask rules (permissions.ask), which still ask; null when it cannot be read. Absent: Bash is always asked.
   */
  sandboxBash?(profileId: string): Promise<SandboxBash | null>;
  /** The profile's `sandbox.network` rules now; null when it cannot be read. Absent: no profile network rules. */
  networkRules?(profileId: string): Promise<{ allow: string[]; deny: string[] } | null>;
  /**
   * Adds `rule` to the profile's `sandbox.network.allow` through the profile's own update (journaled as any profile
   * change); refused as that update would be (a built-in profile is locked). Absent: no profile can be widened.
   */
  allowHost?(profileId: string, rule: string): Promise<void>;
}

/** A profile's say on Bash in a sandboxed session (SessionProfiles.sandboxBash). */
export interface SandboxBash {
  auto_allow: boolean;
  ask: string[];
}

/** `sandbox.auto_allow_bash` of a profile document, read defensively: on unless it is `false`. */
export function autoAllowBash(doc: object): boolean {
  const sandbox = (doc as { sandbox?: { auto_allow_bash?: unknown } }).sandbox;
  return sandbox?.auto_allow_bash !== false;
}

export const SESSION_PROFILES = Symbol('SessionProfiles');

/** The rules a session's worker runs denied: the profile's permissions.deny, then its tools.deny. */
export function sessionDenyRules(doc: Pick<ProfileDoc, 'permissions' | 'tools'>): string[] {
  return [...doc.permissions.deny, ...(doc.tools.deny ?? [])];
}
