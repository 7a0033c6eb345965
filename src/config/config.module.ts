import { DynamicModule, Global, Module } from '@nestjs/common';
import { BrainstemConfig } from './config.schema';

export const CONFIG = Symbol('BrainstemConfig');

@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: BrainstemConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: CONFIG, useValue: config }], exports: [CONFIG] };
  }
}
