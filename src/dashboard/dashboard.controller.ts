import { Controller, Get, Inject } from '@nestjs/common';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { SERVICE_HOST, ServiceHost } from '../config/service-host';
import { RUNTIMES } from '../profiles/profile.schema';
import { RuntimeCatalog } from '../sessions/runtimes/runtime-catalog';
import { DashboardSettings } from './dashboard-settings';

@Controller('dashboard')
export class DashboardController {
  constructor(
    @Inject(CONFIG) private readonly config: BrainstemConfig,
    private readonly runtimes: RuntimeCatalog,
    @Inject(SERVICE_HOST) private readonly host: ServiceHost,
  ) {}

  @Get('settings')
  settings(): DashboardSettings {
    return { stall_threshold_s: this.config.supervision.stall_threshold_s, session_runtimes: this.runtimes.options(this.host.env.PATH ?? ''), profile_runtimes: [...RUNTIMES] };
  }
}
