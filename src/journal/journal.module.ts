import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { JournalController } from './journal.controller';
import { Journal } from './journal.port';
import { JOURNAL } from './journal.tokens';

/** Provides the already opened journal (opened and verified before Nest starts) and closes it last. */
@Global()
@Module({})
export class JournalModule implements OnApplicationShutdown {
  constructor(@Inject(JOURNAL) private readonly journal: Journal) {}

  static forRoot(journal: Journal): DynamicModule {
    return {
      module: JournalModule,
      controllers: [JournalController],
      providers: [{ provide: JOURNAL, useValue: journal }],
      exports: [JOURNAL],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.journal.close();
  }
}
