import { DynamicModule, Global, Module } from '@nestjs/common';
import { BrainstemConfig } from './config.schema';
import { ServiceUrl, urlOf } from './service-url';

export const CONFIG = Symbol('BrainstemConfig');

@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: BrainstemConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: CONFIG, useValue: config },
        { provide: ServiceUrl, useValue: new ServiceUrl(urlOf(config.server.host, config.server.port)) },
      ],
      exports: [CONFIG, ServiceUrl],
    };
  }
}
