import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { DashboardController } from './dashboard.controller';

@Module({ imports: [SessionsModule], controllers: [DashboardController] })
export class DashboardModule {}
