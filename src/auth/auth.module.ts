import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuthController } from './auth.controller';
import { Credentials } from './credentials';
import { SessionsModule } from '../sessions/sessions.module';
import { PrincipalsGuard } from './principals.guard';

/** The credentials (opened before Nest, as the journal is) and the guard every REST route passes. */
@Global()
@Module({})
export class AuthModule {
  static forRoot(credentials: Credentials): DynamicModule {
    return {
      module: AuthModule,
      // The guard tells a worker's token by its session.
      imports: [SessionsModule],
      controllers: [AuthController],
      providers: [{ provide: Credentials, useValue: credentials }, { provide: APP_GUARD, useClass: PrincipalsGuard }],
      exports: [Credentials],
    };
  }
}
