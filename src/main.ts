import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './app.factory';
import { ConfigError, loadConfig } from './config/config.loader';
import { ServiceUrl, urlOf } from './config/service-url';
import { JournalError } from './journal/journal.port';

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await createApp(config);
  const logger = new Logger('brainstem');
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
  // A stray rejection is a bug to log, not a reason to drop every session.
  process.on('unhandledRejection', (reason) => logger.error(`unhandled rejection: ${(reason as Error)?.stack ?? String(reason)}`));
  await app.listen({ host: config.server.host, port: config.server.port });
  const address = app.getHttpServer().address();
  const url = urlOf(config.server.host, typeof address === 'object' && address ? address.port : config.server.port);
  app.get(ServiceUrl).set(url);
  logger.log(`journal ${config.journal.dir}`);
  // Tests and scripts read this line to find the port.
  process.stdout.write(`Brainstem listening on ${url}\n`);
}

main().catch((e: unknown) => {
  if (e instanceof ConfigError || e instanceof JournalError) {
    process.stderr.write(`brainstem: ${e.message}\n`);
  } else {
    process.stderr.write(`brainstem: failed to start: ${(e as Error)?.stack ?? String(e)}\n`);
  }
  process.exit(1);
});
