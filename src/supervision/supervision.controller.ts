import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Sse } from '@nestjs/common';
import { Observable } from 'rxjs';
import { AlsoAllowed } from '../auth/principals.guard';
import { SseMessage } from '../journal/audit';
import { CompleteRoundDto, AutonomousDto, RoundStreamQueryDto, RoundsQueryDto, ScopeDto } from './supervision.dto';
import { RoundView } from './round.view';
import { AutonomousView, ScopeResult, SupervisionService } from './supervision.service';

type Status = { autonomous: AutonomousView | null };

@Controller()
export class SupervisionController {
  constructor(private readonly supervision: SupervisionService) {}

  @Get('session-os/main-brain/autonomous')
  @AlsoAllowed('main_brain')
  status(): Status {
    return this.supervision.status();
  }

  @Post('session-os/main-brain/autonomous')
  @HttpCode(200)
  setAutonomous(@Body() body: AutonomousDto): Promise<Status> {
    return this.supervision.setAutonomous(body, 'rest');
  }

  @Post('coding-sessions/supervision-scope')
  @HttpCode(200)
  scope(@Body() body: ScopeDto): Promise<ScopeResult> {
    return this.supervision.setScope(body.mode, body.session_ids ?? [], 'rest', { externals: 'named', include_external: body.include_external ?? undefined });
  }

  @Get('session-os/main-brain/rounds')
  @AlsoAllowed('main_brain')
  rounds(@Query() q: RoundsQueryDto): { rounds: RoundView[]; next_cursor: string | null } {
    return this.supervision.roundsPage(q);
  }

  @Sse('session-os/main-brain/rounds/stream')
  @AlsoAllowed('main_brain')
  roundStream(@Query() q: RoundStreamQueryDto, @Headers('last-event-id') lastEventId?: string): Observable<SseMessage> {
    return this.supervision.roundStream({ lastEventId, afterSeq: q.after_seq });
  }

  @Get('session-os/main-brain/rounds/:id')
  @AlsoAllowed('main_brain')
  round(@Param('id') id: string): RoundView {
    return this.supervision.getRound(id);
  }

  @Post('session-os/main-brain/rounds/:id/complete')
  @AlsoAllowed('main_brain')
  @HttpCode(200)
  complete(@Param('id') id: string, @Body() body: CompleteRoundDto): Promise<RoundView> {
    return this.supervision.completeRound(id, body.summary);
  }
}
