import { BusModule } from '../bus/bus.module';
import { Inject, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { EventBus } from '../bus/event-bus';
import { NODE_DIRECTORY, NodeDirectory } from '../cluster/node-directory.port';
import { SUPERVISOR_LEASE, SupervisorLease } from '../cluster/supervisor-lease.port';
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
      inject: [EventBus, JOURNAL, SESSION_DIRECTORY, CONFIG, SUPERVISOR_LEASE, NODE_DIRECTORY],
      useFactory: (bus: EventBus, journal: Journal, sessions: SessionDirectory, config: BrainstemConfig, lease: SupervisorLease, nodes: NodeDirectory) =>
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
          undefined,
          { lease, nodes },
        ),
    },
  ],
  exports: [SupervisionService],
})
export class SupervisionModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    @Inject(SupervisionService) private readonly supervision: SupervisionService,
    @Inject(SUPERVISOR_LEASE) private readonly lease: SupervisorLease,
  ) {}

  onApplicationBootstrap(): Promise<void> {
    return this.supervision.start();
  }

  /**
   * Before the journal closes: the state is snapshotted, so the next boot reads no tail; then the lease is let go, so
   * another node takes over supervision at once rather than after its expiry.
   */
  async onModuleDestroy(): Promise<void> {
    this.supervision.stop();
    await this.supervision.saveSnapshot();
    await this.lease.stop();
  }
}
