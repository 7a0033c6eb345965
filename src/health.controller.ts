import { Controller, Get } from '@nestjs/common';
import { AlsoAllowed } from './auth/principals.guard';

@Controller('health')
export class HealthController {
  /** The app listens only after the journal is open and verified, so answering means ready. */
  @Get()
  @AlsoAllowed('main_brain', 'worker')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
