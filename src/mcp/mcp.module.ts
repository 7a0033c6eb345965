import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { hostPolicy } from '../auth/host-policy';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { HttpAdapterHost } from '@nestjs/core';
import { FastifyInstance } from 'fastify';
import { MainBrainModule } from '../main-brain/main-brain.module';
import { ToolRegistry } from '../main-brain/tool-registry';
import { SessionsModule } from '../sessions/sessions.module';
import { SessionsService } from '../sessions/sessions.service';
import { SupervisionModule } from '../supervision/supervision.module';
import { SupervisionService } from '../supervision/supervision.service';
import { ErrorStatuses } from '../http/http-errors';
import { installMcpEndpoint } from './mcp-http.endpoint';

export const MCP_SERVER_VERSION = '0.1.0';

/** The service's own MCP server over streamable HTTP; stdio is `brainstem mcp`, a bridge to this endpoint. */
@Module({ imports: [MainBrainModule, SupervisionModule, SessionsModule] })
export class McpModule implements OnModuleInit {
  constructor(
    private readonly adapter: HttpAdapterHost,
    private readonly registry: ToolRegistry,
    private readonly sessions: SessionsService,
    private readonly supervision: SupervisionService,
    @Inject(CONFIG) private readonly config: BrainstemConfig,
    private readonly statuses: ErrorStatuses,
  ) {}

  /** Before Fastify is ready (createApp calls app.init() first), so the route exists when it listens. */
  onModuleInit(): void {
    const fastify = this.adapter.httpAdapter.getInstance<FastifyInstance>();
    installMcpEndpoint(
      fastify,
      this.sessions,
      { registry: this.registry, supervision: this.supervision, version: MCP_SERVER_VERSION },
      { policy: hostPolicy(this.config.server.host, this.config.server.allowed_hosts), statuses: this.statuses },
    );
  }
}
