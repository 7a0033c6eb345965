import { BusModule } from '../bus/bus.module';
import { Inject, Logger, Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Credentials } from '../auth/credentials';
import { EventBus } from '../bus/event-bus';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { ServiceUrl } from '../config/service-url';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { PROCESS_RUNNER, ProcessRunner } from '../sessions/runtimes/process-runner';
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
import { BRAIN_HOST } from './main-brain.tokens';
import { createRoundDriver } from './drivers/round-drivers';
import { ConfirmationsService } from './confirmations.service';
import { MainBrainController } from './main-brain.controller';
import { registerProfileTools } from './profile.tools';
import { registerSessionSightTools, registerSessionTools } from './session.tools';
import { registerSupervisionTools } from './supervision.tools';
import { ToolRegistry } from './tool-registry';
import { registerWorkerTools } from './worker.tools';

/** How long a call waits for the user's confirmation before it expires unrun. */
const CONFIRMATION_TTL_MS = 24 * 3600 * 1000;

const newId = () => randomBytes(6).toString('hex');

@Module({
  imports: [BusModule, SupervisionModule, ProfilesModule, SessionsModule],
  controllers: [MainBrainController],
  providers: [
    {
      provide: ChatService,
      inject: [EventBus, JOURNAL, SupervisionService, SessionsService],
      useFactory: (bus: EventBus, journal: Journal, supervision: SupervisionService, sessions: SessionsService) =>
        new ChatService(bus, journal, supervision, (sessionId, text) => sessions.dispatch(sessionId, text)),
    },
    {
      provide: ToolRegistry,
      inject: [SupervisionService, ChatService, SessionsService, ProfilesService, ProfileApplier, EventBus],
      useFactory: (supervision: SupervisionService, chat: ChatService, sessions: SessionsService, profiles: ProfilesService, applier: ProfileApplier, bus: EventBus) => {
        const registry = new ToolRegistry();
        registerSupervisionTools(registry, supervision, chat);
        registerSessionTools(registry, sessions);
        registerSessionSightTools(registry, sessions, profiles);
        registerProfileTools(registry, profiles, applier);
        registerWorkerTools(registry, sessions, bus);
        return registry;
      },
    },
    {
      provide: ConfirmationsService,
      inject: [EventBus, JOURNAL, ChatService, ToolRegistry],
      useFactory: (bus: EventBus, journal: Journal, chat: ChatService, registry: ToolRegistry) => {
        const confirmations = new ConfirmationsService(
          bus,
          journal,
          chat,
          (tool, args) => registry.runConfirmed(tool, args),
          Date.now,
          newId,
          CONFIRMATION_TTL_MS,
        );
        registry.gateWith((call) => confirmations.request(call));
        return confirmations;
      },
    },
    {
      provide: BRAIN_HOST,
      inject: [CONFIG, EventBus, JOURNAL, ChatService, SupervisionService, SessionsService, ProfilesService, ConfirmationsService, Credentials, ServiceUrl, PROCESS_RUNNER],
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
      ): Promise<BrainHost | null> => {
        const choice = chooseBrainDriver(config.main_brain.driver, config.main_brain.runtime, process.env.PATH ?? '', process.cwd());
        if (choice.driver !== 'agent') {
          supervision.useDriver(createRoundDriver({ ...config, main_brain: { ...config.main_brain, driver: choice.driver } }, url, credentials));
          return null;
        }
        const host = await createBrainHost({ config, runtime: choice.runtime, bus, journal, chat, supervision, sessions, profiles, confirmations, credentials, url, runner, now: Date.now, newId });
        supervision.useDriver(host.driver);
        return host;
      },
    },
  ],
  exports: [ToolRegistry, ChatService, BRAIN_HOST],
})
export class MainBrainModule implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('main-brain');

  constructor(
    private readonly chat: ChatService,
    private readonly confirmations: ConfirmationsService,
    @Inject(BRAIN_HOST) private readonly brain: BrainHost | null,
  ) {}

  /** Before any bootstrap hook: supervision's restore posts its notices (not restored) while it boots. */
  async onModuleInit(): Promise<void> {
    await this.chat.start();
    await this.confirmations.start();
    if (this.brain) {
      await this.brain.start();
      this.logger.log(`the main brain is hosted on ${this.brain.runtime}`);
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.brain?.stop();
    this.chat.stop();
  }
}
