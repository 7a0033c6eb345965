import { DynamicModule, Global, Module, ValueProvider } from '@nestjs/common';
import { BrainstemConfig } from './config.schema';
import { ServiceUrl, urlOf } from './service-url';

export const CONFIG = Symbol('BrainstemConfig');

/**
 * What the service is started with, global like the journal: the settings, its URL, and what else the caller made
 * before Nest (the credentials, the nodes, the lease, the error statuses), given by the caller so this layer imports no
 * feature.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: BrainstemConfig, opened: ValueProvider[] = []): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: CONFIG, useValue: config }, { provide: ServiceUrl, useValue: new ServiceUrl(urlOf(config.server.host, config.server.port)) }, ...opened],
      exports: [CONFIG, ServiceUrl, ...opened.map((p) => p.provide)],
    };
  }
}
