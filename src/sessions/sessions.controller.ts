import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query, Sse, SseSignal } from '@nestjs/common';
import { Observable } from 'rxjs';
import { AlsoAllowed } from '../auth/principals.guard';
import {
  CreateSessionDto,
  DiffQueryDto,
  ListSessionsQueryDto,
  MergeDto,
  MessageDto,
  OutputQueryDto,
  RemoveWorktreeDto,
  ResumeDto,
  StopDto,
  SupervisionDto,
  UserPermissionDto,
} from './session.dto';
import { SessionDiff } from './session-worktrees';
import { SessionStatus } from './session.status';
import { BudgetDto, budgetOf } from '../usage/budget.dto';
import { OutputStreamMessage, SessionsService } from './sessions.service';
import { OutputTail } from './session-output-reads';

@Controller('coding-sessions')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Post()
  create(@Body() dto: CreateSessionDto): Promise<SessionStatus> {
    return this.sessions.create(dto);
  }

  @Get()
  list(@Query() query: ListSessionsQueryDto): { sessions: SessionStatus[]; next_cursor: string | null } {
    return this.sessions.list(query);
  }

  @Get(':id')
  get(@Param('id') id: string): SessionStatus {
    return this.sessions.status(id);
  }

  /** Also another node's: it reads here the output of a session this node owns, for its own client. */
  @Get(':id/output')
  @AlsoAllowed('node')
  output(@Param('id') id: string, @Query() query: OutputQueryDto): Promise<OutputTail> {
    return this.sessions.output(id, query.tail);
  }

  @Sse(':id/output/stream')
  @AlsoAllowed('node')
  outputStream(@Param('id') id: string, @Query() query: OutputQueryDto, @SseSignal() until: AbortSignal): Promise<Observable<OutputStreamMessage>> {
    return this.sessions.outputStream(id, query.tail, until);
  }

  @Post(':id/messages')
  @HttpCode(200)
  message(@Param('id') id: string, @Body() dto: MessageDto): Promise<SessionStatus> {
    return this.sessions.dispatch(id, dto.text, { by: 'user', via: 'session_messages' });
  }

  @Post(':id/permission')
  @HttpCode(200)
  permission(@Param('id') id: string, @Body() dto: UserPermissionDto): Promise<SessionStatus> {
    return this.sessions.resolvePermission(id, dto.decision, dto.reason ?? null, dto.request_id ?? undefined, 'user', dto.scope ?? undefined);
  }

  // POST :id/signals, every worker's hot path, is served by Fastify itself (signals.route.ts); so are a sandbox
  // launcher's POST :id/network-asks and :id/network-refusals, which only the session's worker may call (network.route.ts).

  @Post(':id/stop')
  @HttpCode(200)
  stop(@Param('id') id: string, @Body() dto: StopDto): Promise<SessionStatus> {
    return this.sessions.stop(id, dto.grace_ms ?? undefined);
  }

  /** The user's: a held session (a loop, a budget) takes messages again. */
  @Post(':id/release')
  @HttpCode(200)
  release(@Param('id') id: string): Promise<SessionStatus> {
    return this.sessions.release(id);
  }

  /** A session parked at its model's limit: resumed now, or kept parked until someone resumes it. */
  @Post(':id/resume')
  @HttpCode(200)
  resume(@Param('id') id: string, @Body() dto: ResumeDto): Promise<SessionStatus> {
    return this.sessions.resume(id, dto.keep_parked === true);
  }

  /** Also another node's: it reads here the diff of a session this node owns (its worktree is on this disk), for its own client. */
  @Get(':id/diff')
  @AlsoAllowed('node')
  diff(@Param('id') id: string, @Query() query: DiffQueryDto): Promise<SessionDiff> {
    return this.sessions.diff(id, query);
  }

  @Post(':id/merge')
  @HttpCode(200)
  merge(@Param('id') id: string, @Body() dto: MergeDto): Promise<SessionStatus> {
    return this.sessions.operateWorktree(id, 'merge', { strategy: dto.strategy });
  }

  @Post(':id/branch-only')
  @HttpCode(200)
  branchOnly(@Param('id') id: string, @Body() dto: RemoveWorktreeDto): Promise<SessionStatus> {
    return this.sessions.operateWorktree(id, 'branch_only', { force: dto.force ?? false });
  }

  @Post(':id/discard')
  @HttpCode(200)
  discard(@Param('id') id: string, @Body() dto: RemoveWorktreeDto): Promise<SessionStatus> {
    return this.sessions.operateWorktree(id, 'discard', { force: dto.force ?? false });
  }

  /** The user's: the session's own budget, whole (a limit left out is none; `{}` leaves its profile's to apply). */
  @Patch(':id/budget')
  budget(@Param('id') id: string, @Body() dto: BudgetDto): Promise<SessionStatus> {
    return this.sessions.setBudget(id, budgetOf(dto));
  }

  @Patch(':id/supervision')
  supervision(@Param('id') id: string, @Body() dto: SupervisionDto): Promise<SessionStatus> {
    return this.sessions.setSupervision(id, dto.excluded);
  }
}
