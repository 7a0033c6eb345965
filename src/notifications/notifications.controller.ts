import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Req } from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { AlsoAllowed } from '../auth/principals.guard';
import { ActionResult, ActionView, NotificationActionsService } from './notification-actions.service';
import { PushSubscriptionDto, RulesDto } from './notifications.dto';
import { ChannelView, EffectiveRules, NotificationsService } from './notifications.service';
import { PushDeviceView, PushDevicesService } from './push-devices.service';

/** The capability an action link's route was authenticated with (src/auth/auth.hook.ts): its principal, never the path. */
function capabilityOf(request: FastifyRequest): string {
  return request.principal?.kind === 'action' ? request.principal.capability_id : '';
}

@Controller('notifications')
export class NotificationsController {
  constructor(
    private readonly notifications: NotificationsService,
    private readonly actions: NotificationActionsService,
    private readonly devices: PushDevicesService,
  ) {}

  @Get('rules')
  rules(): EffectiveRules {
    return this.notifications.effectiveRules();
  }

  @Patch('rules')
  changeRules(@Body() dto: RulesDto): Promise<EffectiveRules> {
    return this.notifications.changeRules({ ...dto });
  }

  @Get('channels')
  channels(): { channels: ChannelView[] } {
    return { channels: this.notifications.channels() };
  }

  @Get('push/key')
  pushKey(): { public_key: string } {
    return this.devices.publicKey();
  }

  @Get('push/subscriptions')
  pushDevices(): { devices: PushDeviceView[] } {
    return this.devices.list();
  }

  @Post('push/subscriptions')
  subscribe(@Body() dto: PushSubscriptionDto, @Headers('origin') origin?: string): Promise<PushDeviceView> {
    return this.devices.subscribe(dto, origin);
  }

  @Delete('push/subscriptions/:id')
  @HttpCode(204)
  unsubscribe(@Param('id') id: string): Promise<void> {
    return this.devices.remove(id);
  }

  /** An action link (ACTION_ROUTE): what it would do. Its capability is its only credential, and this and the POST are all it may call. */
  @Get('actions/:capability')
  @AlsoAllowed('action')
  describeAction(@Req() request: FastifyRequest): ActionView {
    return this.actions.describe(capabilityOf(request));
  }

  /** Uses the action link: once, before it expires, for its own request only. */
  @Post('actions/:capability')
  @AlsoAllowed('action')
  @HttpCode(200)
  useAction(@Req() request: FastifyRequest): Promise<ActionResult> {
    return this.actions.use(capabilityOf(request));
  }
}
