import { Controller, Get } from '@nestjs/common';
import { AlsoAllowed } from './auth/principals.guard';

/** The liveness check: open without a credential (src/http/liveness.ts), so it says nothing more than that the service answers. */
@Controller('health')
export class HealthController {
  /** The app listens only after the journal is open and verified, so answering means alive. */
  @Get()
  @AlsoAllowed('main_brain', 'worker')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
