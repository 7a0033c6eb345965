import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuthController } from './auth.controller';
import { SessionsModule } from '../sessions/sessions.module';
import { PrincipalsGuard } from './principals.guard';

/** The auth routes and the guard every REST route passes; the credentials themselves come with the config (opened before Nest). */
@Module({
  // The guard tells a worker's token by its session.
  imports: [SessionsModule],
  controllers: [AuthController],
  providers: [{ provide: APP_GUARD, useClass: PrincipalsGuard }],
})
export class AuthModule {}
