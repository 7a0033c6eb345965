import { sandboxAvailability, sandboxReadiness, sandboxStartupLine } from './sandbox/sandbox-availability';
import { Logger } from '@nestjs/common';
import { createApp } from './app.factory';
import { claimPluginError } from './bus/plugin-host';
import { ConfigError, loadConfig } from './config/config.loader';
import { ServiceUrl, urlOf } from './config/service-url';
import { journalLocation } from './journal/journal.factory';
import { JournalError } from './journal/journal.port';
import { CredentialFileError } from './auth/credential-files';
import { Credentials } from './auth/credentials';
import { createRootLogger, NestLogger } from './logging/root-logger';

async function main(argv: readonly string[]): Promise<void> {
  const config = loadConfig(process.env, argv);
  const terminal = process.stdout.isTTY === true;
  const log = createRootLogger(config.log_level, terminal);
  const nestLogger = new NestLogger(log);
  // From here on, before the app exists too, every `new Logger(context)` writes to the service's log.
  Logger.overrideLogger(nestLogger);
  const logger = new Logger('brainstem');
  // Installed before plugins load: an error from a plugin's own timer or promise disables that plugin only.
  process.on('unhandledRejection', (reason) => {
    // A stray rejection of our own is a bug to log, not a reason to drop every session.
    if (!claimPluginError(reason)) logger.error(`unhandled rejection: ${(reason as Error)?.stack ?? String(reason)}`);
  });
  process.on('uncaughtException', (err) => {
    if (claimPluginError(err)) return;
    logger.error(`uncaught exception: ${err?.stack ?? String(err)}`);
    process.exit(1);
  });
  const app = await createApp(config, { logger: nestLogger, requestLog: log });
  // Close (flushing the journal's queued appends) and exit 0; Nest's own hooks would re-raise the signal.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.log(`${signal}: shutting down`);
      app.close().then(
        () => process.exit(0),
        (e: unknown) => {
          logger.error(`shutdown failed: ${(e as Error)?.stack ?? String(e)}`);
          process.exit(1);
        },
      );
    });
  }
  try {
    await app.listen({ host: config.server.host, port: config.server.port });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new ConfigError([`BRAINSTEM_PORT: port ${config.server.port} on ${config.server.host} is already in use`]);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      throw new ConfigError([`BRAINSTEM_HOST: cannot listen on ${config.server.host} (${code})`]);
    }
    throw e;
  }
  const address = app.getHttpServer().address();
  const url = urlOf(config.server.host, typeof address === 'object' && address ? address.port : config.server.port);
  app.get(ServiceUrl).set(url);
  logger.log(`journal ${journalLocation(config)}`);
  const credentials = app.get(Credentials);
  if (config.server.auth === 'off') {
    logger.warn('BRAINSTEM_AUTH=off: a request without a credential acts as the user, so any program on this machine can start processes as you');
  }
  // Tests and scripts read this line to find the port (the URL is followed by a space), so it is written whatever the
  // level: plain on a terminal, a JSON line otherwise.
  const sandbox = sandboxStartupLine(sandboxReadiness(config.sandbox.mode, sandboxAvailability()));
  if (sandbox.level === 'warn') logger.warn(sandbox.text);
  else logger.log(sandbox.text);
  const listening = `Brainstem listening on ${url} (user token: ${credentials.userTokenSource()}; main brain token: ${credentials.brainTokenPath()})`;
  if (terminal) process.stdout.write(`${listening}\n`);
  else log.child({ context: 'brainstem' }, { level: 'info' }).info(listening);
}

/** Starts the service with the command-line flags given; a start that fails exits 1 with the reason. */
export function bootstrap(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  return main(argv).catch((e: unknown) => {
    if (e instanceof ConfigError || e instanceof JournalError || e instanceof CredentialFileError) {
      process.stderr.write(`brainstem: ${e.message}\n`);
    } else {
      process.stderr.write(`brainstem: failed to start: ${(e as Error)?.stack ?? String(e)}\n`);
    }
    process.exit(1);
  });
}
