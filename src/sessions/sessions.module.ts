import { tmpdir } from 'node:os';
import { sandboxAvailability } from '../sandbox/sandbox-availability';
import { SandboxSetup } from '../sandbox/sandbox-setup';
import { join } from 'node:path';
import { Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Subscription, concatMap, filter, map, merge } from 'rxjs';
import { WORKER_SESSIONS } from '../auth/worker-sessions.port';
import { inheritedEnv } from '../auth/child-env';
import { Credentials } from '../auth/credentials';
import { BusModule } from '../bus/bus.module';
import { EventBus } from '../bus/event-bus';
import { UsageModule } from '../usage/usage.module';
import { UsageService } from '../usage/usage.service';
import { DomainError } from '../common/domain-error';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { ServiceUrl } from '../config/service-url';
import { NODE_DIRECTORY, NodeDirectory } from '../cluster/node-directory.port';
import { NODE_PEERS, NodePeers } from '../cluster/node-peers.port';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { ProfileApplier } from '../profiles/apply/profile-applier';
import { ProfilesModule } from '../profiles/profiles.module';
import { ProfilesService } from '../profiles/profiles.service';
import { SESSION_DIRECTORY } from '../supervision/session-directory.port';
import { FileSessionEnvStore } from './session-env.store';
import { SESSION_PROFILES, SessionProfiles, autoAllowBash, sessionDenyRules } from './session-profiles.port';
import { profileSandbox, withNetworkAllow } from '../profiles/profile-sandbox';
import { CLOCK, Clock, ID_GENERATOR, IdGenerator, SESSION_HOST, SessionHost, WORKER_ENDPOINT, WorkerEndpoint, randomIds, systemClock } from './session.ports';
import { SessionRegistry } from './session.registry';
import { FileSessionWorkspace } from './session-workspace.files';
import { SESSION_WORKSPACE, SessionWorkspace } from './session-workspace.port';
import { SessionsController } from './sessions.controller';
import { limitSettings } from './session-limit.model';
import { SessionsService } from './sessions.service';
import { SessionsSlice, sessionsSlice } from './sessions.slice';
import { ClaudeCodeRuntime } from './runtimes/claude-code.runtime';
import { codexProtocol } from './runtimes/codex.runtime';
import { CommandRuntime } from './runtimes/command.runtime';
import { geminiProtocol } from './runtimes/gemini-cli.runtime';
import { opencodeProtocol } from './runtimes/opencode.runtime';
import { NodeProcessRunner, PROCESS_RUNNER, ProcessRunner } from './runtimes/process-runner';
import { RuntimeCatalog } from './runtimes/runtime-catalog';
import { RuntimeVersionCheck } from './runtimes/runtime-version.check';
import { PerTurnRuntime } from './runtimes/turn-conversation';
import { GitCli } from '../worktrees/git-cli';
import { CliWorktreeGit } from '../worktrees/worktree-git';
import { WORKTREE_GIT, WorktreeGit } from '../worktrees/worktree-git.port';
import { CliOverlapGit } from '../worktrees/worktree-overlap.git';
import { OverlapSession } from '../worktrees/worktree-overlap.port';
import { WorktreeOverlapsController } from '../worktrees/worktree-overlaps.controller';
import { WorktreeOverlaps } from '../worktrees/worktree-overlaps.service';
import { OverlapWatcher } from '../worktrees/overlap-watcher';

/** Turn ends and merges within this window are one look at the overlaps. */
const OVERLAP_DEBOUNCE_MS = 2000;

const SESSIONS_SLICE = Symbol('SessionsSlice');

/** The profile-resolver port over the profiles feature: the same calls the sessions made of it directly before. */
function sessionProfiles(profiles: ProfilesService, applier: ProfileApplier): SessionProfiles {
  return {
    resolve: async (request) => {
      const id = await profiles.resolveForSession(request);
      try {
        return { id, doc: (await profiles.forApply(id)).doc };
      } catch (e) {
        if (e instanceof DomainError && e.code === 'not_found') throw new DomainError('unknown_profile', `profile_id: no profile ${id}`);
        throw e;
      }
    },
    emission: async (id, runtime, projectDir) => {
      const { doc, emitted, errors } = await applier.emission(id, runtime, projectDir);
      return { doc, files: emitted.files, errors };
    },
    denyRules: async (id) => {
      const profile = await profiles.get(id).catch(() => null);
      return profile && profile.error === null ? sessionDenyRules(profile) : null;
    },
    budgets: async (id) => {
      const profile = await profiles.get(id).catch(() => null);
      return profile && profile.error === null ? (profile.budget ?? null) : null;
    },
    sandboxBash: async (id) => {
      const profile = await profiles.get(id).catch(() => null);
      return profile && profile.error === null ? { auto_allow: autoAllowBash(profile), ask: [...profile.permissions.ask] } : null;
    },
    networkRules: async (id) => {
      const profile = await profiles.get(id).catch(() => null);
      return profile && profile.error === null ? profileSandbox(profile).network : null;
    },
    allowHost: async (id, rule) => {
      const profile = await profiles.get(id);
      if (profile.error !== null) throw new DomainError('unknown_profile', `profile ${id} does not parse: ${profile.error}`);
      const added = withNetworkAllow(profile, rule);
      if (added === profile) return;
      // A merge patch: the rest of the profile's sandbox is left as it is, the allow list replaced whole.
      await profiles.update(id, { sandbox: { network: { allow: added.sandbox?.network?.allow ?? [] } } });
    },
  };
}

@Module({
  imports: [BusModule, ProfilesModule, UsageModule],
  controllers: [SessionsController, WorktreeOverlapsController],
  providers: [
    { provide: CLOCK, useValue: systemClock },
    { provide: ID_GENERATOR, useValue: randomIds },
    { provide: PROCESS_RUNNER, useFactory: () => new NodeProcessRunner() },
    {
      provide: WORKER_ENDPOINT,
      useFactory: (url: ServiceUrl, credentials: Credentials): WorkerEndpoint => ({ url: () => url.get(), token: (id) => credentials.workerToken(id) }),
      inject: [ServiceUrl, Credentials],
    },
    { provide: SESSION_PROFILES, useFactory: sessionProfiles, inject: [ProfilesService, ProfileApplier] },
    // Git (and the hooks it runs) gets the service's environment less its credentials, as workers do.
    { provide: WORKTREE_GIT, useFactory: (host: SessionHost) => new CliWorktreeGit(new GitCli(inheritedEnv(host.env))), inject: [SESSION_HOST] },
    { provide: SESSION_WORKSPACE, useFactory: (config: BrainstemConfig) => new FileSessionWorkspace(join(config.journal.dir, 'session-config')), inject: [CONFIG] },
    {
      provide: RuntimeCatalog,
      useFactory: (runner: ProcessRunner, host: SessionHost) =>
        new RuntimeCatalog(
          [
            new CommandRuntime(runner),
            new ClaudeCodeRuntime(runner),
            ...[codexProtocol, geminiProtocol, opencodeProtocol].map((protocol) => new PerTurnRuntime(protocol, runner)),
          ],
          host.cwd,
        ),
      inject: [PROCESS_RUNNER, SESSION_HOST],
    },
    {
      provide: SESSIONS_SLICE,
      useFactory: (
        config: BrainstemConfig,
        journal: Journal,
        nodes: NodeDirectory,
        runtimes: RuntimeCatalog,
        runner: ProcessRunner,
        profiles: SessionProfiles,
        workspace: SessionWorkspace,
        host: SessionHost,
        endpoint: WorkerEndpoint,
        clock: Clock,
        ids: IdGenerator,
        git: WorktreeGit,
        usage: UsageService,
        peers: NodePeers,
      ): SessionsSlice =>
        sessionsSlice({
          journal,
          runtimes,
          runner,
          profiles,
          workspace,
          envs: new FileSessionEnvStore(join(config.journal.dir, 'session-env')),
          host,
          endpoint,
          clock,
          ids,
          logsDir: join(config.journal.dir, 'session-logs'),
          max_sessions: config.sessions.max_sessions,
          retention_s: config.retention_s,
          nodes,
          peers,
          // A node that does not answer within its lease time is as good as down.
          peer_timeout_ms: config.node.lease_ttl_s * 1000,
          loops: config.loops,
          git,
          worktrees_dir: config.worktrees.dir,
          usage,
          spending: { usd_per_day: config.budget.usd_per_day, prices: config.prices },
          network: { ask_wait_s: config.sandbox.ask_wait_s },
          limits: limitSettings(config.limits),
          sandbox: new SandboxSetup({
            mode: config.sandbox.mode,
            availability: sandboxAvailability(process.platform, host.env.PATH ?? ''),
            data_dir: config.journal.dir,
            profiles_dir: config.profiles.dir,
            worktrees_dir: config.worktrees.dir,
            session_config_dir: (id) => workspace.configDir(id),
            service_url: () => endpoint.url(),
            home: host.home,
            tmp_root: tmpdir(),
          }),
        }),
      inject: [CONFIG, JOURNAL, NODE_DIRECTORY, RuntimeCatalog, PROCESS_RUNNER, SESSION_PROFILES, SESSION_WORKSPACE, SESSION_HOST, WORKER_ENDPOINT, CLOCK, ID_GENERATOR, WORKTREE_GIT, UsageService, NODE_PEERS],
    },
    { provide: SessionRegistry, useFactory: (slice: SessionsSlice) => slice.registry, inject: [SESSIONS_SLICE] },
    {
      provide: WorktreeOverlaps,
      // The worktrees on this node's disk whose work may still be merged: ready, and live or not merged yet.
      useFactory: (registry: SessionRegistry, host: SessionHost) =>
        new WorktreeOverlaps(
          () =>
            registry.list().flatMap((a): OverlapSession[] => {
              const w = a.context.worktree;
              if (!w || w.state !== 'ready' || (w.merged && !a.live) || !registry.owns(a)) return [];
              return [{ session_id: a.id, alias: a.context.alias, branch: w.branch, path: w.path, repo: w.repo, base_branch: w.base_branch, base_sha: w.base_sha, created_at: a.context.created_at }];
            }),
          new CliOverlapGit(new GitCli(inheritedEnv(host.env))),
        ),
      inject: [SessionRegistry, SESSION_HOST],
    },
    {
      provide: OverlapWatcher,
      useFactory: (config: BrainstemConfig, journal: Journal, bus: EventBus, overlaps: WorktreeOverlaps, registry: SessionRegistry) =>
        new OverlapWatcher(
          journal,
          bus.events$,
          {
            repos: () => overlaps.repos(),
            overlaps: (repo) => overlaps.overlaps(repo),
            working: () => registry.list().some((a) => a.live && a.state === 'working' && a.context.worktree?.state === 'ready' && registry.owns(a)),
          },
          `worktree-overlaps-${config.node.id}`,
          { debounce_ms: OVERLAP_DEBOUNCE_MS, interval_ms: config.worktrees.overlap_interval_s * 1000 },
        ),
      inject: [CONFIG, JOURNAL, EventBus, WorktreeOverlaps, SessionRegistry],
    },
    { provide: SessionsService, useFactory: (slice: SessionsSlice) => slice.service, inject: [SESSIONS_SLICE] },
    { provide: WORKER_SESSIONS, useExisting: SessionsService },
    RuntimeVersionCheck,
    { provide: SESSION_DIRECTORY, useFactory: (sessions: SessionsService) => sessions.directory(), inject: [SessionsService] },
  ],
  exports: [SessionsService, RuntimeCatalog, SESSION_DIRECTORY, PROCESS_RUNNER, WORKER_SESSIONS, RuntimeVersionCheck, WorktreeOverlaps],
})
export class SessionsModule implements OnApplicationBootstrap, OnModuleDestroy {
  private profileChanges: Subscription | null = null;

  constructor(
    private readonly bus: EventBus,
    private readonly sessions: SessionsService,
    private readonly overlaps: OverlapWatcher,
  ) {}

  /**
   * A profile edited (over REST or on disk) may have changed its budgets: its sessions are checked against them again.
   * The brain's turn that spent Brainstem's day budget holds every worker, as a worker's would.
   */
  onApplicationBootstrap(): Promise<void> {
    this.profileChanges = merge(
      this.bus.ofType('profile.updated', 'profile.edited_on_disk').pipe(map((e) => e.data.id)),
      this.bus.ofType('brain.budget_exceeded').pipe(
        filter((e) => e.data.scope === 'global_day'),
        map(() => null),
      ),
    )
      .pipe(concatMap((profileId) => this.sessions.budgetsChanged(profileId)))
      .subscribe();
    return this.overlaps.start();
  }

  onModuleDestroy(): void {
    this.overlaps.stop();
    this.profileChanges?.unsubscribe();
  }
}
