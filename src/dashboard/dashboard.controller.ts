import { Controller, Get, Inject } from '@nestjs/common';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';

/** What the page needs to know of the configuration to show what the service does: when a wait counts as stalled. */
export interface DashboardSettings {
  stall_threshold_s: number;
}

@Controller('dashboard')
export class DashboardController {
  constructor(@Inject(CONFIG) private readonly config: BrainstemConfig) {}

  @Get('settings')
  settings(): DashboardSettings {
    return { stall_threshold_s: this.config.supervision.stall_threshold_s };
  }
}
