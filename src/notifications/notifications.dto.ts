import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateBy, ValidateIf, ValidateNested } from 'class-validator';
import { NOTIFICATION_KINDS, NotificationKind, quietRange } from '../config/notify-config';
import { CHANNEL_NAMES, ChannelName } from './notification.events';

/** The rules the dashboard changes; a field left out keeps its value, `quiet_hours: null` turns quiet hours off. */
export class RulesDto {
  @IsOptional() @IsArray() @ArrayMaxSize(NOTIFICATION_KINDS.length) @IsIn(NOTIFICATION_KINDS, { each: true })
  kinds?: NotificationKind[];

  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IsString()
  @ValidateBy({ name: 'quietHours', validator: { validate: (v: unknown) => typeof v === 'string' && quietRange(v) !== null } }, { message: '$property must be HH:MM-HH:MM (two different times), or null' })
  quiet_hours?: string | null;

  @IsOptional() @IsInt() @Min(0) @Max(86_400)
  merge_window_s?: number;

  @IsOptional() @IsInt() @Min(1) @Max(1000)
  digest_after?: number;

  @IsOptional() @IsArray() @ArrayMaxSize(CHANNEL_NAMES.length) @IsIn(CHANNEL_NAMES, { each: true })
  muted_channels?: ChannelName[];
}

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

export class PushKeysDto {
  /** The device's P-256 public key, base64url (65 bytes). */
  @IsString() @MaxLength(200) @Matches(BASE64URL, { message: '$property must be base64url' })
  p256dh!: string;

  /** The device's auth secret, base64url (16 bytes). */
  @IsString() @MaxLength(100) @Matches(BASE64URL, { message: '$property must be base64url' })
  auth!: string;
}

/** A browser's PushSubscription (its toJSON()), and a name for the device. */
export class PushSubscriptionDto {
  @IsString() @MaxLength(2000)
  endpoint!: string;

  @ValidateNested() @Type(() => PushKeysDto)
  keys!: PushKeysDto;

  @IsOptional() @IsString() @MaxLength(100)
  device?: string;
}
