import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Sse } from '@nestjs/common';
import { Observable } from 'rxjs';
import { SseMessage } from '../journal/audit';
import { FastifyRequest } from 'fastify';
import { Principal } from '../auth/principal';
import { AlsoAllowed } from '../auth/principals.guard';
import { BodyNote } from '../http/openapi';
import { AutonomousView } from '../supervision/supervision.service';
import { BrainConversationView, BrainHost } from './agent/brain-host';
import { BRAIN_HOST, BRAIN_PRESENCE } from './main-brain.tokens';
import { BrainPresence } from './brain-presence';
import { ChatDelta, ChatMessage, ChatService } from './chat.service';
import { Confirmation } from './confirmation.decider';
import { ConfirmationsService } from './confirmations.service';
import { ChatStreamQueryDto, ListConfirmationsQueryDto, ListMessagesQueryDto, PostMessageDto, RefuseConfirmationDto } from './main-brain.dto';
import { ToolContext, ToolInfo, ToolRegistry } from './tool-registry';

/** The user calling a tool is the human the gate would ask; anyone else (the brain) is gated. */
function toolContext(principal: Principal | null | undefined): ToolContext {
  return principal?.kind === 'user' ? { actor: 'user', human: true } : { actor: 'main_brain' };
}

@Controller('session-os/main-brain')
export class MainBrainController {
  constructor(
    private readonly tools: ToolRegistry,
    private readonly chat: ChatService,
    private readonly confirmations: ConfirmationsService,
    @Inject(BRAIN_HOST) private readonly brain: BrainHost | null,
    @Inject(BRAIN_PRESENCE) private readonly presenceNow: () => BrainPresence,
  ) {}

  /** Who reads the chat and the rounds now: the hosted brain (runtime, version, conversation) or the brain you bring, or none, and how to connect one. */
  @Get('presence')
  presence(): { presence: BrainPresence } {
    return { presence: this.presenceNow() };
  }

  /** The hosted brain's conversation (its runtime, conversation id, context size, what waits), or null when none is hosted. */
  @Get('conversation')
  conversation(): { conversation: BrainConversationView | null } {
    return { conversation: this.brain?.view() ?? null };
  }

  @Get('tools')
  @AlsoAllowed('main_brain')
  listTools(): { tools: ToolInfo[] } {
    return { tools: this.tools.list('main_brain') };
  }

  /** The body is the tool's arguments, validated against the tool's JSON schema by the registry. */
  @Post('tools/:name')
  @AlsoAllowed('main_brain')
  @BodyNote("The tool's arguments: an object matching the tool's `parameters` JSON Schema (GET /api/v1/session-os/main-brain/tools).")
  @HttpCode(200)
  async callTool(@Param('name') name: string, @Body() args: unknown, @Req() request: FastifyRequest): Promise<{ result: unknown }> {
    return { result: await this.tools.call(name, args, 'main_brain', toolContext(request.principal)) };
  }

  /** The human gate's routes are the user's alone: the brain never confirms its own request. */
  @Get('confirmations')
  listConfirmations(@Query() q: ListConfirmationsQueryDto): { confirmations: Confirmation[] } {
    return { confirmations: this.confirmations.list(q.status) };
  }

  @Get('confirmations/:id')
  confirmation(@Param('id') id: string): Confirmation {
    return this.confirmations.get(id);
  }

  @Post('confirmations/:id/confirm')
  @HttpCode(200)
  confirm(@Param('id') id: string): Promise<Confirmation> {
    return this.confirmations.confirm(id, 'user');
  }

  @Post('confirmations/:id/refuse')
  @HttpCode(200)
  refuse(@Param('id') id: string, @Body() body: RefuseConfirmationDto): Promise<Confirmation> {
    return this.confirmations.refuse(id, 'user', body.reason ?? null);
  }

  @Get('messages')
  @AlsoAllowed('main_brain')
  messages(@Query() q: ListMessagesQueryDto): { messages: ChatMessage[] } {
    return { messages: this.chat.list(q.limit) };
  }

  /** The chat live: messages (id = seq, resumable with Last-Event-ID) and the hosted brain's text deltas as produced. */
  @Sse('messages/stream')
  stream(@Query() q: ChatStreamQueryDto, @Headers('last-event-id') lastEventId?: string): Observable<SseMessage | { type: 'chat.delta'; data: ChatDelta }> {
    return this.chat.stream({ lastEventId, afterSeq: q.after_seq });
  }

  @Post('messages')
  post(@Body() body: PostMessageDto): Promise<{ message: ChatMessage; autonomous?: AutonomousView | null }> {
    return this.chat.post(body.text, 'user', 'user', body.answer_to);
  }
}
