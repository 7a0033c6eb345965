import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import type { IncomingMessage } from 'node:http';
import { Logger, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { ERROR_STATUSES, errorStatuses } from './app.errors';
import { AppModule } from './app.module';
import { installAuth } from './auth/auth.hook';
import { FileCredentialStore } from './auth/credential-files';
import { Credentials } from './auth/credentials';
import { NodeDirectory, soleNode } from './cluster/node-directory.port';
import { PgNodeDirectory } from './cluster/pg-node-directory';
import { noPeers, soleCluster } from './cluster/node-peers.port';
import { LeaseKeeper } from './cluster/lease-keeper';
import { PgLeaseStore } from './cluster/pg-lease.store';
import { SUPERVISOR_LEASE_NAME, SupervisorLease, heldLease } from './cluster/supervisor-lease.port';
import { hostPolicy } from './auth/host-policy';
import { BrainstemConfig } from './config/config.schema';
import { ServiceHost } from './config/service-host';
import { defaultDashboardDir } from './dashboard/dashboard.paths';
import { dashboardPaths, serveDashboard } from './dashboard/dashboard.static';
import { AllExceptionsFilter } from './http/all-exceptions.filter';
import { depthLimitedJsonParser, refuseInheritedQueryKeys } from './http/json-body';
import { installOpenApi } from './http/openapi';
import { createValidationPipe } from './http/validation';
import { openConfiguredJournal } from './journal/journal.factory';
import { Journal } from './journal/journal.port';
import { MCP_SERVER_VERSION } from './mcp/mcp.module';
import { currentRequestId } from './logging/request-context';
import { requestIdFrom } from './logging/request-id';
import { installRequestLog } from './logging/request-log.hook';
import { installSignalsRoute, signalsRoute } from './sessions/signals.route';
import { installNetworkRoutes, networkRoutes } from './sessions/network.route';
import { SessionsService } from './sessions/sessions.service';
import type { Logger as PinoLogger } from 'pino';

export interface AppOptions {
  /** An already opened journal (tests); otherwise the configured one (LevelDB in journal.dir, or journal.url) is opened and verified. */
  journal?: Journal;
  logger?: LoggerService | false;
  /** Where one line per request is logged (the service's log); none when absent. */
  requestLog?: PinoLogger;
  /** The built dashboard (tests build their own); otherwise dist/web of this package. */
  dashboardDir?: string;
  /** What the service runs in (tests give their own); otherwise this process's environment, home and directory. */
  host?: ServiceHost;
}

export const API_PREFIX = 'api/v1';

/**
 * On a journal database shared with other nodes, the supervisor lease is kept there (its table comes with the journal's
 * migrations); a node on the embedded journal, or on one handed in by a test, always holds it.
 */
function supervisorLease(config: BrainstemConfig, configuredJournal: boolean): SupervisorLease {
  if (!config.journal.url || !configuredJournal) return heldLease(config.node.id);
  return new LeaseKeeper(new PgLeaseStore(config.journal.url, config.node.lease_ttl_s * 1000), SUPERVISOR_LEASE_NAME, config.node.id, config.node.lease_ttl_s * 1000, Date.now);
}

/** The one read of the process's environment, home and directory: the features are handed it as configuration. */
function processHost(): ServiceHost {
  return { env: { ...process.env }, home: homedir(), cwd: process.cwd() };
}

/** Builds the whole service; the journal is opened and verified before any route exists. */
export async function createApp(config: BrainstemConfig, options: AppOptions = {}): Promise<NestFastifyApplication> {
  const journal =
    options.journal ??
    (await openConfiguredJournal(config.journal, {
      correlationId: currentRequestId,
      node: { id: config.node.id, leaseTtlS: config.node.lease_ttl_s },
      onFollowError: (e) => new Logger('journal').error(`following the journal database failed: ${e.message}`),
      onFollowerError: (e, event) => new Logger('journal').error(`applying ${event.type} (seq ${event.seq}) from another node failed: ${e.message}`),
    }));
  const nodes = await nodeDirectory(config, journal);
  const peers = nodes instanceof PgNodeDirectory ? nodes : noPeers;
  const reader = nodes instanceof PgNodeDirectory ? nodes : soleCluster(config.node.id, new Date(), () => journal.head().seq);
  // Shutdown must not wait for clients: event streams and long-polling calls (a pending permission prompt) never end on their own.
  const adapter = new FastifyAdapter({
    bodyLimit: config.server.body_limit_bytes,
    forceCloseConnections: true,
    genReqId: (req: IncomingMessage) => requestIdFrom(req.headers['x-request-id'], randomUUID),
  });
  const fastify = adapter.getInstance();
  installRequestLog(fastify, options.requestLog ?? null);
  const credentials = new Credentials(new FileCredentialStore(config.journal.dir), { configuredUserToken: config.server.api_token });
  const dashboard = options.dashboardDir ?? defaultDashboardDir();
  installAuth(fastify, {
    credentials,
    policy: hostPolicy(config.server.host, config.server.allowed_hosts),
    anonymousIsUser: config.server.auth === 'off',
    publicPaths: dashboardPaths(dashboard),
    statuses: errorStatuses,
    peers,
  });
  await serveDashboard(fastify, dashboard, errorStatuses);
  refuseInheritedQueryKeys(fastify);
  // No endpoint takes plain text: such a body is answered 415, not parsed into a string that fails validation.
  fastify.removeContentTypeParser('text/plain');
  // A YAML body reaches handlers as {yaml: <text>}, the shape of the JSON alternative, so one DTO validates both.
  fastify.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml'], { parseAs: 'string' }, (_req, body, done) =>
    done(null, { yaml: body }),
  );
  const lease = supervisorLease(config, options.journal === undefined);
  await lease.start();
  try {
    const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, journal, credentials, { nodes, peers, reader, lease }, options.host ?? processHost()), adapter, {
      logger: options.logger,
      abortOnError: false,
    });
    app.useBodyParser('application/json', { bodyLimit: config.server.body_limit_bytes }, depthLimitedJsonParser(fastify));
    app.setGlobalPrefix(API_PREFIX);
    app.useGlobalPipes(createValidationPipe());
    app.useGlobalFilters(new AllExceptionsFilter(errorStatuses));
    installSignalsRoute(fastify, API_PREFIX, app.get(SessionsService));
    installNetworkRoutes(fastify, API_PREFIX, app.get(SessionsService));
    installOpenApi(app, API_PREFIX, MCP_SERVER_VERSION, ERROR_STATUSES, [signalsRoute(API_PREFIX), ...networkRoutes(API_PREFIX)]);
    await app.init();
    await fastify.ready();
    return app;
  } catch (e) {
    // Nothing else would end its claims and heartbeats: they would keep the process alive.
    await lease.stop();
    if (nodes instanceof PgNodeDirectory) await nodes.stop();
    throw e;
  }
}

/**
 * The nodes sharing the journal: on a database, this node registers and heartbeats in it (its migrations made the
 * table; the directory stops with the application); the embedded journal has one node.
 */
async function nodeDirectory(config: BrainstemConfig, journal: Journal): Promise<NodeDirectory> {
  if (!config.journal.url) return soleNode(config.node.id);
  const logger = new Logger('nodes');
  const nodes = new PgNodeDirectory(config.journal.url, {
    self: config.node.id,
    leaseTtlS: config.node.lease_ttl_s,
    seq: () => journal.head().seq,
    onError: (e) => logger.warn(`heartbeat of node ${config.node.id} failed: ${e.message}`),
  });
  try {
    await nodes.start();
  } catch (e) {
    await journal.close();
    throw e;
  }
  return nodes;
}
