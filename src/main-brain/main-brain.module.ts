import { Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { EventBus } from '../bus/event-bus';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { ProfileApplier } from '../profiles/apply/profile-applier';
import { ProfilesModule } from '../profiles/profiles.module';
import { ProfilesService } from '../profiles/profiles.service';
import { SessionsService } from '../sessions/sessions.service';
import { SupervisionModule } from '../supervision/supervision.module';
import { SupervisionService } from '../supervision/supervision.service';
import { ChatService } from './chat.service';
import { ConfirmationsService } from './confirmations.service';
import { MainBrainController } from './main-brain.controller';
import { registerProfileTools } from './profile.tools';
import { registerSessionSightTools, registerSessionTools } from './session.tools';
import { registerSupervisionTools } from './supervision.tools';
import { ToolRegistry } from './tool-registry';
import { registerWorkerTools } from './worker.tools';

/** How long a call waits for the user's confirmation before it expires unrun. */
const CONFIRMATION_TTL_MS = 24 * 3600 * 1000;

@Module({
  imports: [SupervisionModule, ProfilesModule],
  controllers: [MainBrainController],
  providers: [
    {
      provide: ChatService,
      inject: [EventBus, JOURNAL, SupervisionService],
      useFactory: (bus: EventBus, journal: Journal, supervision: SupervisionService) => new ChatService(bus, journal, supervision),
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
          () => randomBytes(6).toString('hex'),
          CONFIRMATION_TTL_MS,
        );
        registry.gateWith((call) => confirmations.request(call));
        return confirmations;
      },
    },
  ],
  exports: [ToolRegistry, ChatService],
})
export class MainBrainModule implements OnModuleInit, OnModuleDestroy {
  constructor(
    private readonly chat: ChatService,
    private readonly confirmations: ConfirmationsService,
  ) {}

  /** Before any bootstrap hook: supervision's restore posts its notices (not restored) while it boots. */
  async onModuleInit(): Promise<void> {
    await this.chat.start();
    await this.confirmations.start();
  }

  onModuleDestroy(): void {
    this.chat.stop();
  }
}
