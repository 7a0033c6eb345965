import { BusModule } from '../bus/bus.module';
import { homedir } from 'node:os';
import { Module } from '@nestjs/common';
import { EventBus } from '../bus/event-bus';
import { CONFIG } from '../config/config.module';
import { ServiceUrl } from '../config/service-url';
import { NodeApplyFs } from './apply/node-apply-fs';
import { ProfileApplier } from './apply/profile-applier';
import { BrainstemConfig } from '../config/config.schema';
import { FsProfileStore, ProfileStore } from './profile.store';
import { JournalReader } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { Clock, ProfilesService } from './profiles.service';
import { ProfileHistoryEvent } from './profiles-state';
import { ProfilesController } from './profiles.controller';

export const PROFILE_STORE = Symbol('ProfileStore');
export const PROFILES_CLOCK = Symbol('ProfilesClock');

/** Every event of the profile streams (`profile-<id>`, `profiles`), oldest first. */
export async function* profileHistory(journal: JournalReader): AsyncIterable<ProfileHistoryEvent> {
  for (let after = 0; ; ) {
    const page = await journal.readAll(after, 1000);
    if (page.length === 0) return;
    for (const e of page) if (e.stream === 'profiles' || e.stream.startsWith('profile-')) yield e;
    after = page[page.length - 1].seq;
  }
}

/** The events of the named profiles' streams, merged in journal order. */
export async function profileStreams(journal: JournalReader, ids: readonly string[]): Promise<ProfileHistoryEvent[]> {
  const streams = await Promise.all(ids.map((id) => journal.readStream(`profile-${id}`)));
  return streams.flat().sort((a, b) => a.seq - b.seq);
}

@Module({
  imports: [BusModule],
  controllers: [ProfilesController],
  providers: [
    { provide: PROFILE_STORE, useFactory: (config: BrainstemConfig) => new FsProfileStore(config.profiles.dir), inject: [CONFIG] },
    { provide: PROFILES_CLOCK, useValue: (() => new Date()) satisfies Clock },
    {
      provide: ProfilesService,
      useFactory: (store: ProfileStore, bus: EventBus, clock: Clock, journal: JournalReader) =>
        new ProfilesService(store, bus, clock, () => profileHistory(journal), (ids) => profileStreams(journal, ids)),
      inject: [PROFILE_STORE, EventBus, PROFILES_CLOCK, JOURNAL],
    },
    {
      provide: ProfileApplier,
      useFactory: (profiles: ProfilesService, bus: EventBus, url: ServiceUrl) => {
        const applier = new ProfileApplier(profiles, new NodeApplyFs(), bus, {
          serviceUrl: () => url.get(),
          pathEnv: () => process.env.PATH ?? '',
          home: () => process.env.HOME || homedir(),
        });
        profiles.onSaved((id, doc) => applier.autoApply(id, doc));
        return applier;
      },
      inject: [ProfilesService, EventBus, ServiceUrl],
    },
  ],
  exports: [ProfilesService, ProfileApplier],
})
export class ProfilesModule {}
