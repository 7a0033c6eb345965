import { BusModule } from '../bus/bus.module';
import { Inject, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { EventBus } from '../bus/event-bus';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { SessionsModule } from '../sessions/sessions.module';
import { SESSION_DIRECTORY, SessionDirectory } from './session-directory.port';
import { SupervisionController } from './supervision.controller';
import { SupervisionService } from './supervision.service';

@Module({
  imports: [BusModule, SessionsModule],
  controllers: [SupervisionController],
  providers: [
    {
      provide: SupervisionService,
      inject: [EventBus, JOURNAL, SESSION_DIRECTORY, CONFIG],
      useFactory: (bus: EventBus, journal: Journal, sessions: SessionDirectory, config: BrainstemConfig) =>
        new SupervisionService(
          bus,
          journal,
          sessions,
          {
            debounce_ms: config.supervision.debounce_ms,
            restore_ttl_s: config.supervision.restore_ttl_s,
            round_timeout_s: config.main_brain.round_timeout_s,
            watchdog: config.supervision,
            retention_s: config.retention_s,
          },
          Date.now,
          () => randomBytes(6).toString('hex'),
        ),
    },
  ],
  exports: [SupervisionService],
})
export class SupervisionModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(@Inject(SupervisionService) private readonly supervision: SupervisionService) {}

  onApplicationBootstrap(): Promise<void> {
    return this.supervision.start();
  }

  /** Before the journal closes: the state is snapshotted, so the next boot reads no tail. */
  onModuleDestroy(): Promise<void> {
    this.supervision.stop();
    return this.supervision.saveSnapshot();
  }
}
