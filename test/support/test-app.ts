import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../src/app.factory';
import { BrainstemConfig } from '../../src/config/config.schema';
import { ServiceUrl } from '../../src/config/service-url';
import { testConfig } from './test-config';
import { tempDir } from './temp-dir';

export interface TestApp {
  app: NestFastifyApplication;
  config: BrainstemConfig;
  /** Fastify's in-process request injection. */
  inject: NestFastifyApplication['inject'];
  /** Base URL when started with listen: true. */
  url: string;
  close(): Promise<void>;
}

/** The whole service in-process on a real LevelDB journal in a temp dir (and a temp profiles dir). */
export async function startTestApp(env: Record<string, string> = {}, options: { listen?: boolean } = {}): Promise<TestApp> {
  const dir = tempDir('brainstem-app-');
  const config = testConfig({
    BRAINSTEM_JOURNAL_DIR: `${dir.path}/journal`,
    BRAINSTEM_PROFILES_DIR: `${dir.path}/profiles`,
    BRAINSTEM_PORT: '0',
    ...env,
  });
  const app = await createApp(config, { logger: false });
  let url = '';
  if (options.listen) {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.getHttpServer().address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    app.get(ServiceUrl).set(url);
  }
  const fastify = app.getHttpAdapter().getInstance();
  return {
    app,
    config,
    url,
    inject: fastify.inject.bind(fastify) as NestFastifyApplication['inject'],
    close: async () => {
      await app.close();
      dir.remove();
    },
  };
}
