import { Inject, Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { UsageController } from './usage.controller';
import { UsageService } from './usage.service';

/**
 * Usage: the projection of what workers and the brain spent, and its route. Loaded before any bootstrap hook, so the
 * sessions that recover at bootstrap decide their budgets on totals that are up to date.
 */
@Module({
  controllers: [UsageController],
  providers: [{ provide: UsageService, inject: [JOURNAL], useFactory: (journal: Journal) => new UsageService(journal, Date.now) }],
  exports: [UsageService],
})
export class UsageModule implements OnModuleInit, OnModuleDestroy {
  constructor(@Inject(UsageService) private readonly usage: UsageService) {}

  onModuleInit(): Promise<void> {
    return this.usage.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.usage.stop();
  }
}
