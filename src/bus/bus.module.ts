import { Inject, Logger, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { SERVICE_HOST, ServiceHost } from '../config/service-host';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { EventBus } from './event-bus';
import { PluginHost } from './plugin-host';

@Module({
  providers: [
    { provide: EventBus, useFactory: (journal: Journal) => new EventBus(journal), inject: [JOURNAL] },
    {
      provide: PluginHost,
      useFactory: (bus: EventBus, journal: Journal, config: BrainstemConfig) =>
        new PluginHost(bus, journal, config, new Logger('plugins')),
      inject: [EventBus, JOURNAL, CONFIG],
    },
  ],
  exports: [EventBus, PluginHost],
})
export class BusModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    private readonly plugins: PluginHost,
    @Inject(CONFIG) private readonly config: BrainstemConfig,
    @Inject(SERVICE_HOST) private readonly host: ServiceHost,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.plugins.loadAll(this.config.plugins, this.host.cwd);
  }

  onModuleDestroy(): void {
    this.plugins.close();
  }
}
