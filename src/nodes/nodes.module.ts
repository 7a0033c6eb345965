import { Inject, Module, OnApplicationBootstrap } from '@nestjs/common';
import { CLUSTER_READER, ClusterReader, NODE_PEERS, NodePeers } from '../cluster/node-peers.port';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { ServiceUrl } from '../config/service-url';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { SessionsModule } from '../sessions/sessions.module';
import { SESSION_DIRECTORY, SessionDirectory } from '../supervision/session-directory.port';
import { NodesController } from './nodes.controller';
import { NodesService } from './nodes.service';

/**
 * The nodes sharing the journal, as a route (GET /cluster), and this node's address for the others: advertised once it
 * listens (BRAINSTEM_NODE_URL, else the address it listens on), so they can ask it for its sessions' output.
 */
@Module({
  imports: [SessionsModule],
  controllers: [NodesController],
  providers: [
    {
      provide: NodesService,
      inject: [CLUSTER_READER, SESSION_DIRECTORY, JOURNAL, CONFIG],
      useFactory: (reader: ClusterReader, sessions: SessionDirectory, journal: Journal, config: BrainstemConfig) =>
        new NodesService(reader, sessions, journal, { self: config.node.id, shared: config.journal.url !== null, leaseTtlMs: config.node.lease_ttl_s * 1000 }),
    },
  ],
})
export class NodesModule implements OnApplicationBootstrap {
  constructor(
    @Inject(NODE_PEERS) private readonly peers: NodePeers,
    @Inject(CONFIG) private readonly config: BrainstemConfig,
    private readonly url: ServiceUrl,
  ) {}

  onApplicationBootstrap(): void {
    void this.url.listening.then((listening) => this.peers.advertise(this.config.node.url ?? listening));
  }
}
