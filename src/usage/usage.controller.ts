import { Controller, Get, Query } from '@nestjs/common';
import { UsageQueryDto } from './usage.dto';
import { UsageReport, UsageService } from './usage.service';

@Controller('usage')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  /** Totals from the usage projection, grouped, over a range of UTC days. */
  @Get()
  report(@Query() query: UsageQueryDto): UsageReport {
    return this.usage.report(query.group_by, { since: query.since ?? null, until: query.until ?? null });
  }
}
