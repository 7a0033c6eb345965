import { Controller, Get } from '@nestjs/common';

@Controller('health')
export class HealthController {
  /** The app listens only after the journal is open and verified, so answering means ready. */
  @Get()
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
