import { Module } from '@nestjs/common';
import { CONFIG } from '../config/config.module';
import { SERVICE_HOST, ServiceHost } from '../config/service-host';
import { ServiceUrl } from '../config/service-url';
import { NodeApplyFs } from './apply/node-apply-fs';
import { ProfileApplier } from './apply/profile-applier';
import { BrainstemConfig } from '../config/config.schema';
import { FsProfileStore, ProfileStore } from './profile.store';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { Clock, ProfilesService } from './profiles.service';
import { ProfilesController } from './profiles.controller';

export const PROFILE_STORE = Symbol('ProfileStore');
export const PROFILES_CLOCK = Symbol('ProfilesClock');

@Module({
  controllers: [ProfilesController],
  providers: [
    { provide: PROFILE_STORE, useFactory: (config: BrainstemConfig) => new FsProfileStore(config.profiles.dir), inject: [CONFIG] },
    { provide: PROFILES_CLOCK, useValue: (() => new Date()) satisfies Clock },
    {
      provide: ProfilesService,
      useFactory: (store: ProfileStore, journal: Journal, clock: Clock, host: ServiceHost) => new ProfilesService(store, journal, clock, { home: host.home }),
      inject: [PROFILE_STORE, JOURNAL, PROFILES_CLOCK, SERVICE_HOST],
    },
    {
      provide: ProfileApplier,
      useFactory: (profiles: ProfilesService, url: ServiceUrl, host: ServiceHost) => {
        const applier = new ProfileApplier(profiles, new NodeApplyFs(), {
          serviceUrl: () => url.get(),
          pathEnv: () => host.env.PATH ?? '',
          home: () => host.home,
        });
        profiles.onSaved((id, doc) => applier.autoApply(id, doc));
        return applier;
      },
      inject: [ProfilesService, ServiceUrl, SERVICE_HOST],
    },
  ],
  exports: [ProfilesService, ProfileApplier],
})
export class ProfilesModule {}
