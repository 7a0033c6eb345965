import { Module } from '@nestjs/common';
import { AuthController } from './auth.controller';

/**
 * The auth routes; the credentials themselves come with the config (opened before Nest). The guard every REST route
 * passes (PrincipalsGuard) is installed by the app's composition, which gives it the sessions' WORKER_SESSIONS port.
 */
@Module({
  controllers: [AuthController],
})
export class AuthModule {}
