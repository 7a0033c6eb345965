import { BusModule } from '../bus/bus.module';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { EventBus } from '../bus/event-bus';
import { CONFIG } from '../config/config.module';
import { BrainstemConfig } from '../config/config.schema';
import { NODE_DIRECTORY, NodeDirectory } from '../cluster/node-directory.port';
import { Journal } from '../journal/journal.port';
import { JOURNAL } from '../journal/journal.tokens';
import { ProfilesModule } from '../profiles/profiles.module';
import { SESSION_DIRECTORY } from '../supervision/session-directory.port';
import { CLOCK, ID_GENERATOR, randomIds, systemClock } from './session.ports';
import { FileSessionEnvStore } from './session-env.store';
import { SessionRegistry } from './session.registry';
import { SessionsController } from './sessions.controller';
import { SessionsService } from './sessions.service';
import { ClaudeCodeRuntime } from './runtimes/claude-code.runtime';
import { codexProtocol } from './runtimes/codex.runtime';
import { CommandRuntime } from './runtimes/command.runtime';
import { geminiProtocol } from './runtimes/gemini-cli.runtime';
import { opencodeProtocol } from './runtimes/opencode.runtime';
import { NodeProcessRunner, PROCESS_RUNNER, ProcessRunner } from './runtimes/process-runner';
import { RuntimeCatalog } from './runtimes/runtime-catalog';
import { RuntimeVersionCheck } from './runtimes/runtime-version.check';
import { PerTurnRuntime } from './runtimes/turn-conversation';

@Module({
  imports: [BusModule, ProfilesModule],
  controllers: [SessionsController],
  providers: [
    { provide: CLOCK, useValue: systemClock },
    { provide: ID_GENERATOR, useValue: randomIds },
    { provide: PROCESS_RUNNER, useFactory: () => new NodeProcessRunner() },
    {
      provide: RuntimeCatalog,
      useFactory: (runner: ProcessRunner) =>
        new RuntimeCatalog([
          new CommandRuntime(runner),
          new ClaudeCodeRuntime(runner),
          ...[codexProtocol, geminiProtocol, opencodeProtocol].map((protocol) => new PerTurnRuntime(protocol, runner)),
        ]),
      inject: [PROCESS_RUNNER],
    },
    {
      provide: SessionRegistry,
      useFactory: (journal: Journal, bus: EventBus, config: BrainstemConfig, nodes: NodeDirectory) =>
        new SessionRegistry(journal, bus, new FileSessionEnvStore(join(config.journal.dir, 'session-env')), { retention_s: config.retention_s, nodes }),
      inject: [JOURNAL, EventBus, CONFIG, NODE_DIRECTORY],
    },
    SessionsService,
    RuntimeVersionCheck,
    { provide: SESSION_DIRECTORY, useFactory: (sessions: SessionsService) => sessions.directory(), inject: [SessionsService] },
  ],
  exports: [SessionsService, RuntimeCatalog, SESSION_DIRECTORY, PROCESS_RUNNER],
})
export class SessionsModule {}
