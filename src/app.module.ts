import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { errorStatuses } from './app.errors';
import { AuthModule } from './auth/auth.module';
import { Credentials } from './auth/credentials';
import { PrincipalsGuard } from './auth/principals.guard';
import { NODE_DIRECTORY, NodeDirectory } from './cluster/node-directory.port';
import { CLUSTER_READER, ClusterReader, NODE_PEERS, NodePeers } from './cluster/node-peers.port';
import { SUPERVISOR_LEASE, SupervisorLease } from './cluster/supervisor-lease.port';
import { BusModule } from './bus/bus.module';
import { ConfigModule } from './config/config.module';
import { SERVICE_HOST, ServiceHost } from './config/service-host';
import { DashboardModule } from './dashboard/dashboard.module';
import { ExternalModule } from './external/external.module';
import { ErrorStatuses } from './http/http-errors';
import { HealthController } from './health.controller';
import { BrainstemConfig } from './config/config.schema';
import { ReadinessController } from './http/readiness.controller';
import { JournalModule } from './journal/journal.module';
import { Journal } from './journal/journal.port';
import { ProfilesModule } from './profiles/profiles.module';
import { MainBrainModule } from './main-brain/main-brain.module';
import { McpModule } from './mcp/mcp.module';
import { NotificationsModule } from './notifications/notifications.module';
import { NodesModule } from './nodes/nodes.module';
import { SessionsModule } from './sessions/sessions.module';
import { UsageModule } from './usage/usage.module';
import { WorkflowsModule } from './workflows/workflows.module';

/** The node among those sharing the journal, as the composition root made it before Nest. */
export interface AppCluster {
  nodes: NodeDirectory;
  peers: NodePeers;
  reader: ClusterReader;
  lease: SupervisorLease;
}

@Module({})
export class AppModule {
  static forRoot(config: BrainstemConfig, journal: Journal, credentials: Credentials, cluster: AppCluster, host: ServiceHost): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config, [
          { provide: Credentials, useValue: credentials },
          { provide: NODE_DIRECTORY, useValue: cluster.nodes },
          { provide: NODE_PEERS, useValue: cluster.peers },
          { provide: CLUSTER_READER, useValue: cluster.reader },
          { provide: SUPERVISOR_LEASE, useValue: cluster.lease },
          { provide: ErrorStatuses, useValue: errorStatuses },
          { provide: SERVICE_HOST, useValue: host },
        ]),
        JournalModule.forRoot(journal),
        AuthModule,
        BusModule,
        ProfilesModule,
        UsageModule,
        SessionsModule,
        MainBrainModule,
        WorkflowsModule,
        ExternalModule,
        McpModule,
        NotificationsModule,
        DashboardModule,
        NodesModule,
      ],
      controllers: [HealthController, ReadinessController],
      // The guard every REST route passes: it tells a worker's credential by its session (WORKER_SESSIONS, from SessionsModule).
      providers: [{ provide: APP_GUARD, useClass: PrincipalsGuard }],
    };
  }
}
