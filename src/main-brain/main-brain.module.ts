import { BusModule } from '../bus/bus.module';
import { Inject, Logger, Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Subscription } from 'rxjs';
import { NODE_DIRECTORY, NodeDirectory } from '../cluster/node-directory.port';
import { SUPERVISOR_LEASE, SupervisorLease } from '../cluster/supervisor-lease.port';
import { randomBytes } from 'node:crypto';
import { Credentials } from '../auth/credentials';
import { EventBus } from '../bus/event-bus';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { SERVICE_HOST, ServiceHost } from '../config/service-host';
import { ServiceUrl } from '../config/service-url';
import { BRAIN_READINESS, BrainReadinessSource } from '../http/readiness.controller';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { PROCESS_RUNNER, ProcessRunner } from '../sessions/runtimes/process-runner';
import { RuntimeVersionCheck } from '../sessions/runtimes/runtime-version.check';
import { ProfileApplier } from '../profiles/apply/profile-applier';
import { ProfilesModule } from '../profiles/profiles.module';
import { ProfilesService } from '../profiles/profiles.service';
import { SessionsModule } from '../sessions/sessions.module';
import { SessionsService } from '../sessions/sessions.service';
import { SupervisionModule } from '../supervision/supervision.module';
import { SupervisionService } from '../supervision/supervision.service';
import { BrainHost } from './agent/brain-host';
import { createBrainHost } from './agent/brain-host.factory';
import { chooseBrainDriver } from './agent/brain-runtime';
import { ChatService } from './chat.service';
import { BRAIN_HOST, BRAIN_PRESENCE } from './main-brain.tokens';
import { BrainPresence, brainPresence } from './brain-presence';
import { createRoundDriver } from './drivers/round-drivers';
import { ConfirmationsService, loopHoldConfirmation } from './confirmations.service';
import { MainBrainController } from './main-brain.controller';
import { registerProfileTools } from './profile.tools';
import { registerSessionSightTools, registerSessionTools } from './session.tools';
import { registerSupervisionTools } from './supervision.tools';
import { ToolRegistry } from './tool-registry';
import { UsageModule } from '../usage/usage.module';
import { UsageService } from '../usage/usage.service';
import { registerWorkerTools } from './worker.tools';
import { registerWorktreeTools } from './worktree.tools';
import { registerUsageTools } from './usage.tools';
import { WorktreeOverlaps } from '../worktrees/worktree-overlaps.service';
import { BudgetAsks } from './budget-asks';

/** How long a call waits for the user's confirmation before it expires unrun. */
const CONFIRMATION_TTL_MS = 24 * 3600 * 1000;

const newId = () => randomBytes(6).toString('hex');

@Module({
  imports: [BusModule, SupervisionModule, ProfilesModule, SessionsModule, UsageModule],
  controllers: [MainBrainController],
  providers: [
    {
      provide: ChatService,
      inject: [EventBus, JOURNAL, SupervisionService, SessionsService],
      useFactory: (bus: EventBus, journal: Journal, supervision: SupervisionService, sessions: SessionsService) => {
        const chat = new ChatService(bus, journal, supervision, (sessionId, text) => sessions.dispatch(sessionId, text, { by: 'user', via: 'chat' }));
        // Rounds name a worker's open question by its seq in the chat, where the user answers it.
        supervision.useQuestions((sessionId) => chat.openQuestionSeq(sessionId));
        return chat;
      },
    },
    {
      provide: ToolRegistry,
      inject: [SupervisionService, ChatService, SessionsService, ProfilesService, ProfileApplier, EventBus, UsageService, WorktreeOverlaps],
      useFactory: (
        supervision: SupervisionService,
        chat: ChatService,
        sessions: SessionsService,
        profiles: ProfilesService,
        applier: ProfileApplier,
        bus: EventBus,
        usage: UsageService,
        overlaps: WorktreeOverlaps,
      ) => {
        const registry = new ToolRegistry();
        registerUsageTools(registry, usage, sessions);
        registerSupervisionTools(registry, supervision, chat);
        registerSessionTools(registry, sessions);
        registerSessionSightTools(registry, sessions, profiles);
        registerWorktreeTools(registry, sessions, overlaps);
        registerProfileTools(registry, profiles, applier);
        registerWorkerTools(registry, sessions, bus);
        return registry;
      },
    },
    {
      provide: ConfirmationsService,
      inject: [JOURNAL, ChatService, ToolRegistry, SupervisionService],
      useFactory: (journal: Journal, chat: ChatService, registry: ToolRegistry, supervision: SupervisionService) => {
        const confirmations = new ConfirmationsService(
          journal,
          chat,
          (tool, args) => registry.runConfirmed(tool, args),
          (tool) => registry.has(tool),
          Date.now,
          newId,
          CONFIRMATION_TTL_MS,
        );
        registry.gateWith((call) => confirmations.request(call));
        // A session held for a loop that persisted: the user is asked in the chat whether to release it.
        supervision.onLoopHeld((held) => confirmations.request(loopHoldConfirmation(held)));
        return confirmations;
      },
    },
    {
      provide: BRAIN_HOST,
      inject: [CONFIG, EventBus, JOURNAL, ChatService, SupervisionService, SessionsService, ProfilesService, ConfirmationsService, Credentials, ServiceUrl, PROCESS_RUNNER, SERVICE_HOST, UsageService],
      useFactory: async (
        config: BrainstemConfig,
        bus: EventBus,
        journal: Journal,
        chat: ChatService,
        supervision: SupervisionService,
        sessions: SessionsService,
        profiles: ProfilesService,
        confirmations: ConfirmationsService,
        credentials: Credentials,
        url: ServiceUrl,
        runner: ProcessRunner,
        serviceHost: ServiceHost,
        usage: UsageService,
      ): Promise<BrainHost | null> => {
        const choice = chooseBrainDriver(config.main_brain.driver, config.main_brain.runtime, serviceHost.env.PATH ?? '', serviceHost.cwd);
        if (choice.driver !== 'agent') {
          supervision.useDriver(createRoundDriver({ ...config, main_brain: { ...config.main_brain, driver: choice.driver } }, url, credentials, serviceHost.env));
          return null;
        }
        const host = await createBrainHost({ config, runtime: choice.runtime, bus, journal, chat, supervision, sessions, profiles, confirmations, usage, credentials, url, runner, env: serviceHost.env, now: Date.now, newId });
        supervision.useDriver(host.driver);
        return host;
      },
    },
    {
      provide: BudgetAsks,
      inject: [CONFIG, EventBus, ChatService, ConfirmationsService, SessionsService, ProfilesService],
      useFactory: (config: BrainstemConfig, bus: EventBus, chat: ChatService, confirmations: ConfirmationsService, sessions: SessionsService, profiles: ProfilesService) =>
        new BudgetAsks(bus, chat, (call) => confirmations.request(call), sessions, profiles, config.node.id, Date.now),
    },
    {
      provide: BRAIN_READINESS,
      inject: [SupervisionService, BRAIN_HOST],
      useFactory: (supervision: SupervisionService, brain: BrainHost | null): BrainReadinessSource => ({
        brain: () => ({ driver: supervision.driverName, hosted: brain !== null, runtime: brain?.runtime ?? null, connected: brain ? brain.active : null }),
      }),
    },
    {
      provide: BRAIN_PRESENCE,
      inject: [SupervisionService, BRAIN_HOST, SUPERVISOR_LEASE, NODE_DIRECTORY, RuntimeVersionCheck, ChatService],
      useFactory: (supervision: SupervisionService, brain: BrainHost | null, lease: SupervisorLease, nodes: NodeDirectory, versions: RuntimeVersionCheck, chat: ChatService) => {
        const presence = (): BrainPresence => {
          const held = lease.state();
          const holder = held.role === 'leader' ? lease.holder : held.holder;
          return brainPresence({
            driver: supervision.driverName,
            hosted: brain && {
              runtime: brain.runtime,
              version: versions.version(brain.runtime),
              running_here: brain.active,
              conversation_id: brain.active ? brain.view().conversation_id : null,
              parked: brain.active ? brain.view().parked : null,
            },
            node: lease.holder,
            lease_holder: holder,
            lease_holder_up: holder !== null && nodes.isUp(holder),
            round_listeners: supervision.roundListeners,
          });
        };
        chat.usePresence(presence);
        return presence;
      },
    },
  ],
  exports: [ToolRegistry, ChatService, ConfirmationsService, BRAIN_HOST, BRAIN_READINESS, BRAIN_PRESENCE],
})
export class MainBrainModule implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('main-brain');
  private hosted = false;
  private leaseSub: Subscription | null = null;

  constructor(
    private readonly chat: ChatService,
    private readonly confirmations: ConfirmationsService,
    private readonly budgetAsks: BudgetAsks,
    @Inject(BRAIN_HOST) private readonly brain: BrainHost | null,
    @Inject(SUPERVISOR_LEASE) private readonly lease: SupervisorLease,
  ) {}

  /**
   * Before any bootstrap hook: supervision's restore posts its notices (not restored) while it boots. The hosted brain
   * runs on the supervisor lease holder only: started when this node holds the lease, stopped when it loses it.
   */
  async onModuleInit(): Promise<void> {
    await this.chat.start();
    await this.confirmations.start();
    this.budgetAsks.start();
    if (!this.brain) return;
    if (this.lease.state().role === 'leader') await this.hostBrain(this.brain);
    this.leaseSub = this.lease.changes$.subscribe((s) => {
      if (s.role === 'leader') this.hostBrain(this.brain as BrainHost).catch((e: Error) => this.logger.error(`hosting the main brain failed: ${e.message}`));
      else this.unhostBrain(true).catch((e: Error) => this.logger.error(`stopping the main brain failed: ${e.message}`));
    });
  }

  private async hostBrain(brain: BrainHost): Promise<void> {
    if (this.hosted) return;
    this.hosted = true;
    await brain.start();
    this.logger.log(`the main brain is hosted on ${brain.runtime}`);
  }

  private async unhostBrain(leaseLost: boolean): Promise<void> {
    if (!this.hosted) return;
    this.hosted = false;
    if (leaseLost) this.logger.warn('this node no longer holds the supervisor lease: its main brain stops until it holds it again');
    await this.brain?.stop();
  }

  async onModuleDestroy(): Promise<void> {
    this.leaseSub?.unsubscribe();
    await this.unhostBrain(false);
    this.budgetAsks.stop();
    this.confirmations.stop();
    this.chat.stop();
  }
}
