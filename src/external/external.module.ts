import { Inject, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { inheritedEnv } from '../auth/child-env';
import { Credentials } from '../auth/credentials';
import { BusModule } from '../bus/bus.module';
import { EventBus } from '../bus/event-bus';
import { packageRoot } from '../common/package-root';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { SERVICE_HOST, ServiceHost } from '../config/service-host';
import { ServiceUrl } from '../config/service-url';
import { SessionsModule } from '../sessions/sessions.module';
import { SessionsService } from '../sessions/sessions.service';
import { SupervisionModule } from '../supervision/supervision.module';
import { SupervisionService } from '../supervision/supervision.service';
import { runProgram } from './claude-agents';
import { ClaudeHooksInstaller, claudeHooksFiles } from './claude-hooks.installer';
import { brainstemHooks, shellWord } from './claude-settings';
import { ExternalController } from './external.controller';
import { ExternalHooksService } from './external-hooks.service';

/**
 * The command a hook runs: this node and this package's `brainstem hook <event>`, naming the service and the hook
 * token's file (read at each event, so a rotated token reaches the hooks without installing again).
 */
function hookCommand(url: string, tokenFile: string): (event: string) => string {
  const bin = join(packageRoot(), 'bin', 'brainstem.js');
  return (event) => [process.execPath, bin, 'hook', event, '--url', url, '--token-file', tokenFile].map(shellWord).join(' ');
}

/** Claude sessions started outside Brainstem, brought in by claude's hooks: the hook routes, installing the hooks, claude's agents. */
@Module({
  imports: [BusModule, SessionsModule, SupervisionModule],
  controllers: [ExternalController],
  providers: [
    {
      provide: ExternalHooksService,
      inject: [SessionsService, SupervisionService, EventBus, CONFIG, SERVICE_HOST],
      useFactory: (sessions: SessionsService, supervision: SupervisionService, bus: EventBus, config: BrainstemConfig, host: ServiceHost) =>
        new ExternalHooksService(
          sessions,
          supervision,
          bus,
          { home: host.home, ...config.external },
          () => randomBytes(16).toString('hex'),
          runProgram(inheritedEnv(host.env), host.home),
        ),
    },
    {
      provide: ClaudeHooksInstaller,
      inject: [CONFIG, SERVICE_HOST, Credentials, ServiceUrl],
      useFactory: (config: BrainstemConfig, host: ServiceHost, credentials: Credentials, url: ServiceUrl) =>
        new ClaudeHooksInstaller(claudeHooksFiles(host.home, config.journal.dir), () => brainstemHooks(hookCommand(url.get(), credentials.hookToken().path), config.external)),
    },
  ],
})
export class ExternalModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(@Inject(ExternalHooksService) private readonly hooks: ExternalHooksService) {}

  onApplicationBootstrap(): void {
    this.hooks.start();
  }

  onModuleDestroy(): void {
    this.hooks.stop();
  }
}
