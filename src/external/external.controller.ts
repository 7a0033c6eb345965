import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { AlsoAllowed } from '../auth/principals.guard';
import { SessionStatus } from '../sessions/session.status';
import { AgentsListing } from './claude-agents';
import { ClaudeHooksInstaller, HooksChange, InstalledHooks } from './claude-hooks.installer';
import { HookDecision } from './hook-waits';
import { HookReportDto, HooksDto } from './external.dto';
import { ExternalHooksService, ReportAnswer } from './external-hooks.service';

@Controller('external')
export class ExternalController {
  constructor(
    private readonly hooks: ExternalHooksService,
    private readonly installer: ClaudeHooksInstaller,
  ) {}

  /** A claude hook's event; the hook credential may call it for the claude session the report is bound to. */
  @Post('claude/events/:event')
  @AlsoAllowed('hook')
  @HttpCode(200)
  report(@Param('event') event: string, @Body() body: HookReportDto): Promise<ReportAnswer> {
    return this.hooks.report(event, body);
  }

  /** A waiting hook's decision (its wait id came in the answer to its report only). */
  @Post('claude/waits/:id')
  @AlsoAllowed('hook')
  @HttpCode(200)
  decision(@Param('id') id: string): Promise<{ decision: HookDecision | null }> {
    return this.hooks.decision(id);
  }

  @Get('claude-hooks')
  installs(): { installs: InstalledHooks[] } {
    return { installs: this.installer.list() };
  }

  @Post('claude-hooks/install')
  @HttpCode(200)
  install(@Body() dto: HooksDto): Promise<HooksChange> {
    return this.installer.install(dto);
  }

  @Post('claude-hooks/uninstall')
  @HttpCode(200)
  uninstall(@Body() dto: HooksDto): Promise<HooksChange> {
    return this.installer.uninstall(dto);
  }

  @Get('claude-agents')
  agents(): Promise<AgentsListing> {
    return this.hooks.agents();
  }

  @Post('claude-agents/:id/adopt')
  @HttpCode(200)
  adopt(@Param('id') id: string): Promise<SessionStatus> {
    return this.hooks.adopt(id);
  }
}
