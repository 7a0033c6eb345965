import { Inject, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { FileCredentialStore } from '../auth/credential-files';
import { Credentials } from '../auth/credentials';
import { BusModule } from '../bus/bus.module';
import { EventBus } from '../bus/event-bus';
import { SUPERVISOR_LEASE, SupervisorLease } from '../cluster/supervisor-lease.port';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { ServiceUrl } from '../config/service-url';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { ConfirmationsService } from '../main-brain/confirmations.service';
import { MainBrainModule } from '../main-brain/main-brain.module';
import { pendingPermission } from '../sessions/session.events';
import { SessionsModule } from '../sessions/sessions.module';
import { SessionsService } from '../sessions/sessions.service';
import { SupervisionModule } from '../supervision/supervision.module';
import { SupervisionService } from '../supervision/supervision.service';
import { NotificationChannel } from './channels/notification-channel.port';
import { NtfyChannel } from './channels/ntfy.channel';
import { VapidKeys, WebPushChannel, generateVapidKeys } from './channels/web-push.channel';
import { WebhookChannel } from './channels/webhook.channel';
import { NotificationActionsService } from './notification-actions.service';
import { NotificationsController } from './notifications.controller';
import { NotificationsService } from './notifications.service';
import { NotificationsStore } from './notifications.store';
import { ActionPorts, NotifierPorts, localMinuteOfDay } from './notifier.ports';
import { PushDevicesService } from './push-devices.service';

const VAPID_KEYS = Symbol('VapidKeys');

/** The Web Push key pair: generated at first start into the data directory, mode 0600, like the tokens. */
function vapidKeys(config: BrainstemConfig): VapidKeys {
  const text = new FileCredentialStore(config.journal.dir).loadOrCreate('vapid-keys', () => JSON.stringify(generateVapidKeys()));
  return JSON.parse(text) as VapidKeys;
}

function notifierPorts(sessions: SessionsService, supervision: SupervisionService, lease: SupervisorLease, url: ServiceUrl, credentials: Credentials, config: BrainstemConfig): NotifierPorts {
  const status = (id: string) => {
    try {
      return sessions.status(id);
    } catch {
      return null;
    }
  };
  return {
    sessionInfo: (id) => {
      const s = status(id);
      return s ? { id: s.id, alias: s.alias, title: s.title, runtime: s.runtime } : null;
    },
    handledByBrain: (id) => supervision.isOn() && status(id)?.supervised === true,
    isLeader: () => lease.state().role === 'leader',
    publicUrl: () => config.notify.public_url ?? url.get(),
    actionToken: (id) => credentials.actionToken(id),
    now: () => Date.now(),
    minuteOfDay: localMinuteOfDay,
    newId: () => randomBytes(9).toString('base64url'),
  };
}

function actionPorts(sessions: SessionsService, confirmations: ConfirmationsService): ActionPorts {
  return {
    permissionPending: (sessionId, requestId) => {
      try {
        return pendingPermission(sessions.status(sessionId), requestId) !== undefined;
      } catch {
        return false;
      }
    },
    confirmationPending: (id) => confirmations.list('pending').some((c) => c.id === id),
    resolvePermission: (sessionId, decision, reason, requestId) => sessions.resolvePermission(sessionId, decision, reason, requestId, 'user'),
    confirm: (id) => confirmations.confirm(id, 'user'),
    refuse: (id, reason) => confirmations.refuse(id, 'user', reason),
  };
}

function channelsOf(config: BrainstemConfig, store: NotificationsStore, keys: VapidKeys): NotificationChannel[] {
  const n = config.notify;
  const channels: NotificationChannel[] = [];
  if (n.web_push) channels.push(new WebPushChannel(() => store.state.subscriptions, keys, n.vapid_subject));
  if (n.ntfy_url !== null && n.ntfy_topic !== null) channels.push(new NtfyChannel(n.ntfy_url, n.ntfy_topic, n.ntfy_token));
  if (n.webhook_url !== null) channels.push(new WebhookChannel(n.webhook_url, n.webhook_format));
  return channels;
}

@Module({
  imports: [BusModule, SessionsModule, SupervisionModule, MainBrainModule],
  controllers: [NotificationsController],
  providers: [
    { provide: NotificationsStore, inject: [JOURNAL], useFactory: (journal: Journal) => new NotificationsStore(journal) },
    { provide: VAPID_KEYS, inject: [CONFIG], useFactory: vapidKeys },
    {
      provide: NotificationsService,
      inject: [NotificationsStore, EventBus, CONFIG, VAPID_KEYS, SessionsService, SupervisionService, SUPERVISOR_LEASE, ServiceUrl, Credentials],
      useFactory: (
        store: NotificationsStore,
        bus: EventBus,
        config: BrainstemConfig,
        keys: VapidKeys,
        sessions: SessionsService,
        supervision: SupervisionService,
        lease: SupervisorLease,
        url: ServiceUrl,
        credentials: Credentials,
      ) => new NotificationsService(store, bus.events$, channelsOf(config, store, keys), config.notify, notifierPorts(sessions, supervision, lease, url, credentials, config)),
    },
    {
      provide: NotificationActionsService,
      inject: [NotificationsStore, SessionsService, ConfirmationsService],
      useFactory: (store: NotificationsStore, sessions: SessionsService, confirmations: ConfirmationsService) =>
        new NotificationActionsService(store, actionPorts(sessions, confirmations), {
          now: () => Date.now(),
          sessionInfo: (id) => {
            const s = sessions.find(id) ? sessions.status(id) : null;
            return s ? { id: s.id, alias: s.alias, title: s.title, runtime: s.runtime } : null;
          },
        }),
    },
    {
      provide: PushDevicesService,
      inject: [NotificationsStore, VAPID_KEYS],
      useFactory: (store: NotificationsStore, keys: VapidKeys) => new PushDevicesService(store, keys.publicKey, () => Date.now()),
    },
  ],
})
export class NotificationsModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    @Inject(NotificationsStore) private readonly store: NotificationsStore,
    @Inject(NotificationsService) private readonly notifications: NotificationsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.store.start();
    this.notifications.start();
  }

  onModuleDestroy(): void {
    this.notifications.stop();
    this.store.stop();
  }
}
