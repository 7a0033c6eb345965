import { inheritedEnv } from '../auth/child-env';
import { DomainError } from '../common/domain-error';
import { SessionFile, SessionWorkspace } from './session-workspace.port';
import { SessionWorktreeSetup, WorktreeRequest } from './session-worktree-setup';
import { CONFIGURED_RUNTIMES, ConfiguredRuntime, SessionProfiles, sessionDenyRules } from './session-profiles.port';
import { CreateSessionDto } from './session.dto';
import { CreateBody } from './session.commands';
import { DenyFacts, ProfileConfigFact, RuntimeFact, sessionCwd } from './session.decider';
import { NetworkRules } from './session-network.decider';
import { SandboxFact } from '../sandbox/sandbox-policy';
import { SandboxSetup } from '../sandbox/sandbox-setup';
import { profileSandbox } from '../profiles/profile-sandbox';
import { SessionHost } from './session.ports';
import { claudeSessionConfig } from './runtimes/claude-code-profile';
import { codexSessionArgs } from './runtimes/codex-profile';
import { opencodeSessionConfig } from './runtimes/opencode-profile';
import { RuntimeCatalog } from './runtimes/runtime-catalog';

/**
 * A create's facts, the files its runtime reads the profile from (written before it is journaled), and the worktree to
 * add in the creation's turn (isolation `worktree`, when every fact before it allows one).
 */
export interface SessionPlan {
  body: Omit<CreateBody, 'node' | 'excluded'>;
  files: readonly SessionFile[];
  worktree: WorktreeRequest | null;
}

const WORKTREE_FIELDS = ['base_ref', 'branch', 'worktree'] as const;

/**
 * What a session needs from outside before its commands are decided: its profile, whether its directory is one, the
 * runtime that will run it, the profile as that runtime takes it; and, for a permission request or answer, the
 * profile's deny rules now and the service's home. Facts only: the rules that judge them are the session decider's.
 */
export class SessionSetup {
  constructor(
    private readonly profiles: SessionProfiles,
    private readonly workspace: SessionWorkspace,
    private readonly runtimes: RuntimeCatalog,
    private readonly host: SessionHost,
    private readonly limits: { max_sessions: number },
    readonly worktrees: SessionWorktreeSetup,
    /** Null: workers run unsandboxed (a slice built without the sandbox, as some specs are). */
    private readonly sandbox: SandboxSetup | null = null,
  ) {}

  /** The home `~/` in a profile's rule means when the worker's env sets none. */
  get home(): string {
    return this.host.home;
  }

  /** Each fact is looked up only when the ones before it allow: a runtime is chosen in a directory, a profile emitted for a runtime. */
  async plan(dto: CreateSessionDto, id: string): Promise<SessionPlan> {
    // The validation pipe lets null through an optional field; like JSON clients mean it, it is read as absent.
    const requestedCwd = dto.cwd ?? null;
    const profile = await this.profiles.resolve({ profile_id: dto.profile_id ?? null, cwd: requestedCwd });
    const isolation = dto.isolation ?? profile.doc.isolation ?? 'none';
    const stray = WORKTREE_FIELDS.find((f) => dto[f] !== undefined && dto[f] !== null);
    if (isolation === 'none' && stray) throw new DomainError('invalid_input', `${stray}: only with isolation "worktree"`);
    const profileFacts = { id: profile.id, default_cwd: profile.doc.default_cwd || null, deny: sessionDenyRules(profile.doc), ...(profile.doc.loops ? { loops: profile.doc.loops } : {}) };
    const cwd = sessionCwd(requestedCwd, profileFacts);
    const dir = 'path' in cwd && (await this.workspace.isDirectory(cwd.path)) ? cwd.path : null;
    const env = dto.env ?? {};
    const command = dto.command ?? undefined;
    // A request with a command runs it, whatever runtime the profile targets.
    const runtimeName = dto.runtime ?? (command === undefined ? profile.doc.runtime : undefined);
    const runtime: RuntimeFact | null = dir === null ? null : this.runtimes.choose({ runtime: runtimeName, command, cwd: dir, pathEnv: env.PATH ?? this.host.env.PATH ?? '' });
    const sandboxed = runtime !== null && 'name' in runtime && this.sandbox !== null && this.sandbox.sandboxes(runtime.name);
    const configured = dir !== null && runtime !== null && 'name' in runtime ? await this.profileConfig(runtime.name, profile.id, dir, id, sandboxed) : null;
    // A worktree is looked at only for a create the facts before it let through: one refused anyway adds none.
    const usable = runtime !== null && 'name' in runtime && !(configured && 'errors' in configured.fact);
    const isolated = await this.worktrees.plan({
      isolation,
      dir: usable ? dir : null,
      base_ref: dto.base_ref ?? undefined,
      branch: dto.branch ?? undefined,
      worktree: dto.worktree ?? undefined,
      title: dto.title ?? '',
      setup: profile.doc.worktree?.setup ?? null,
      copy: profile.doc.worktree?.copy ?? [],
    });
    const request = isolated.request;
    const chosen = runtime !== null && 'name' in runtime ? runtime.name : null;
    const sandbox: SandboxFact =
      this.sandbox && chosen !== null
        ? await this.sandbox.fact(id, chosen, dir ?? '/', inheritedEnv({ ...this.host.env, ...(configured && 'args' in configured.fact ? configured.fact.env : {}), ...env }), profileSandbox(profile.doc))
        : { on: false, reason: 'not sandboxed by this service', required: false };
    return {
      body: {
        id,
        title: dto.title ?? '',
        cwd: requestedCwd,
        profile: profileFacts,
        cwd_is_directory: dir !== null,
        runtime,
        profile_config: configured?.fact ?? null,
        args: dto.args ?? [],
        env,
        max_sessions: this.limits.max_sessions,
        isolation,
        work_tree: isolated.work_tree,
        worktree: request && 'refusal' in request ? request : null,
        sandbox,
      },
      files: configured?.files ?? [],
      worktree: request && !('refusal' in request) ? request : null,
    };
  }

  /** The profile bound to a directory (or its nearest ancestor), else the default, with its deny rules: an external session's. */
  async boundProfile(cwd: string): Promise<{ id: string; deny: string[] }> {
    const profile = await this.profiles.resolve({ profile_id: null, cwd });
    return { id: profile.id, deny: sessionDenyRules(profile.doc) };
  }

  /** The profile's deny rules now; null when it cannot be read (then it allows nothing). */
  profileDeny(profileId: string | null): Promise<string[] | null> {
    return profileId === null ? Promise.resolve([]) : this.profiles.denyRules(profileId);
  }

  /**
   * What a permission request is judged by as it arrives: the profile's deny rules now, the service's home, and, in a
   * sandboxed session, whether its profile lets Bash run unasked (null: it cannot be read, so Bash is asked).
   */
  async denyFacts(profileId: string | null, sandboxed = false): Promise<DenyFacts> {
    const facts: DenyFacts = { profile_deny: await this.profileDeny(profileId), home: this.home };
    if (!sandboxed) return facts;
    const bash = profileId === null ? { auto_allow: true, ask: [] } : ((await this.profiles.sandboxBash?.(profileId)) ?? null);
    return { ...facts, sandbox_bash: bash };
  }

  /** The profile's `sandbox.network` rules now, for a connection asked about or an allow of one; null lists when it cannot be read. */
  async networkRules(profileId: string | null): Promise<NetworkRules> {
    if (profileId === null || !this.profiles.networkRules) return { allow: [], deny: [] };
    const rules = await this.profiles.networkRules(profileId);
    return rules ?? { allow: null, deny: null };
  }

  /** Adds a host to the profile's `sandbox.network.allow` (a user's allow with scope `profile`). */
  async allowHost(profileId: string | null, rule: string): Promise<void> {
    if (profileId === null) throw new DomainError('invalid_input', 'scope: profile needs a session with a profile');
    if (!this.profiles.allowHost) throw new DomainError('invalid_input', 'scope: profile is not available here');
    await this.profiles.allowHost(profileId, rule);
  }

  writeConfig(id: string, files: readonly SessionFile[]): Promise<void> {
    return this.workspace.writeConfig(id, files);
  }

  removeConfig(id: string): Promise<void> {
    return this.workspace.removeConfig(id);
  }

  /**
   * Agent runtimes get the session's profile by flags, so starting a session never writes to the user's repo:
   * claude-code's point at files in the session's config directory (the workspace's), codex's are `-c` overrides,
   * opencode's config file there is named by OPENCODE_CONFIG and its agent by `--agent`. Gemini CLI has no per-run
   * way to take settings, so its sessions only record their profile.
   */
  private async profileConfig(runtime: string, profileId: string, cwd: string, id: string, sandboxed: boolean): Promise<{ fact: ProfileConfigFact; files: readonly SessionFile[] } | null> {
    if (!CONFIGURED_RUNTIMES.includes(runtime)) return null;
    const { doc, files: emitted, errors } = await this.profiles.emission(profileId, runtime as ConfiguredRuntime, cwd);
    if (errors.length) return { fact: { errors }, files: [] };
    if (runtime === 'codex') return { fact: { args: codexSessionArgs(doc, emitted) }, files: [] };
    const dir = this.workspace.configDir(id);
    const { files, args, env } = runtime === 'opencode' ? opencodeSessionConfig(doc, profileId, emitted, dir) : claudeSessionConfig(doc, emitted, dir, sandboxed);
    return { fact: { args, ...(env ? { env } : {}) }, files };
  }
}
