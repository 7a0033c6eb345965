import { Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventBus } from '../bus/event-bus';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { SupervisionModule } from '../supervision/supervision.module';
import { SupervisionService } from '../supervision/supervision.service';
import { ChatService } from './chat.service';
import { MainBrainController } from './main-brain.controller';
import { registerSupervisionTools } from './supervision.tools';
import { ToolRegistry } from './tool-registry';

@Module({
  imports: [SupervisionModule],
  controllers: [MainBrainController],
  providers: [
    {
      provide: ChatService,
      inject: [EventBus, JOURNAL, SupervisionService],
      useFactory: (bus: EventBus, journal: Journal, supervision: SupervisionService) => new ChatService(bus, journal, supervision),
    },
    {
      provide: ToolRegistry,
      inject: [SupervisionService, ChatService],
      useFactory: (supervision: SupervisionService, chat: ChatService) => {
        const registry = new ToolRegistry();
        registerSupervisionTools(registry, supervision, chat);
        return registry;
      },
    },
  ],
  exports: [ToolRegistry, ChatService],
})
export class MainBrainModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(private readonly chat: ChatService) {}

  onApplicationBootstrap(): Promise<void> {
    return this.chat.start();
  }

  onModuleDestroy(): void {
    this.chat.stop();
  }
}
