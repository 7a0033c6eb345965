import { BusModule } from '../bus/bus.module';
import { Module, OnApplicationBootstrap } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { SESSION_DIRECTORY, SessionDirectory } from '../supervision/session-directory.port';
import { SessionsModule } from '../sessions/sessions.module';
import { SupervisionModule } from '../supervision/supervision.module';
import { SupervisionService } from '../supervision/supervision.service';
import { WorkflowsController } from './workflows.controller';
import { WorkflowsService } from './workflows.service';

@Module({
  imports: [BusModule, SupervisionModule, SessionsModule],
  controllers: [WorkflowsController],
  providers: [
    {
      provide: WorkflowsService,
      inject: [JOURNAL, SupervisionService, SESSION_DIRECTORY, CONFIG],
      useFactory: (journal: Journal, supervision: SupervisionService, sessions: SessionDirectory, config: BrainstemConfig) =>
        new WorkflowsService(journal, supervision, sessions, Date.now, () => randomBytes(6).toString('hex'), config.retention_s),
    },
  ],
})
export class WorkflowsModule implements OnApplicationBootstrap {
  constructor(private readonly workflows: WorkflowsService) {}

  onApplicationBootstrap(): Promise<void> {
    return this.workflows.start();
  }
}
