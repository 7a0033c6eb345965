import { Controller, Get, Header, Query } from '@nestjs/common';
import { UsageQueryDto } from './usage.dto';
import { UsageService } from './usage.service';

@Controller('usage')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  /** Totals from the usage projection, grouped, over a range of UTC days: a UsageReport, as JSON kept ready. */
  @Get()
  @Header('content-type', 'application/json; charset=utf-8')
  report(@Query() query: UsageQueryDto): Buffer {
    return this.usage.reportJson(query.group_by, { since: query.since ?? null, until: query.until ?? null });
  }
}
