import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { AlsoAllowed } from '../auth/principals.guard';
import { AutonomousView } from '../supervision/supervision.service';
import { ChatMessage, ChatService } from './chat.service';
import { ListMessagesQueryDto, PostMessageDto } from './main-brain.dto';
import { ToolInfo, ToolRegistry } from './tool-registry';

@Controller('session-os/main-brain')
export class MainBrainController {
  constructor(
    private readonly tools: ToolRegistry,
    private readonly chat: ChatService,
  ) {}

  @Get('tools')
  @AlsoAllowed('main_brain')
  listTools(): { tools: ToolInfo[] } {
    return { tools: this.tools.list('main_brain') };
  }

  /** The body is the tool's arguments, validated against the tool's JSON schema by the registry. */
  @Post('tools/:name')
  @AlsoAllowed('main_brain')
  @HttpCode(200)
  async callTool(@Param('name') name: string, @Body() args: unknown): Promise<{ result: unknown }> {
    return { result: await this.tools.call(name, args, 'main_brain', { actor: 'main_brain' }) };
  }

  @Get('messages')
  @AlsoAllowed('main_brain')
  messages(@Query() q: ListMessagesQueryDto): { messages: ChatMessage[] } {
    return { messages: this.chat.list(q.limit) };
  }

  @Post('messages')
  post(@Body() body: PostMessageDto): Promise<{ message: ChatMessage; autonomous?: AutonomousView | null }> {
    return this.chat.post(body.text, 'user', 'user');
  }
}
