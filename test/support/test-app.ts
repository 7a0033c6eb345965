import { LoggerService } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../src/app.factory';
import { BrainstemConfig } from '../../src/config/config.schema';
import { ServiceHost } from '../../src/config/service-host';
import { ServiceUrl } from '../../src/config/service-url';
import { Credentials } from '../../src/auth/credentials';
import type { InjectOptions } from 'fastify';
import { TEST_USER_TOKEN, testConfig } from './test-config';

export { TEST_USER_TOKEN };
import { tempDir } from './temp-dir';

export type TestPrincipal = 'user' | 'main_brain' | { worker: string };

export interface TestApp {
  app: NestFastifyApplication;
  config: BrainstemConfig;
  /** Fastify's in-process request injection, as the user: adds the user's bearer token unless the request sets authorization. */
  inject: NestFastifyApplication['inject'];
  /** Injection with only the headers given (no credential added). */
  rawInject: NestFastifyApplication['inject'];
  /** The user's token (BRAINSTEM_API_TOKEN of this app). */
  token: string;
  /** The token of a principal: the user (default), the main brain, or a session's worker. */
  tokenOf(principal?: TestPrincipal): string;
  /** `Authorization: Bearer <tokenOf(principal)>`. */
  auth(principal?: TestPrincipal): { authorization: string };
  /** Base URL when started with listen: true. */
  url: string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Listen on a loopback port (sets `url`); otherwise only in-process injection. */
  listen?: boolean;
  /** Receives the service's log from its creation on (what it logs while starting included); else it is silent. */
  logger?: LoggerService;
  dashboardDir?: string;
  /** What the service runs in (its environment, home and directory); by default this process's, read at the start. */
  host?: ServiceHost;
}

/** The whole service in-process on a real LevelDB journal in a temp dir (and a temp profiles dir), removed on close. */
export async function startTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const dir = tempDir('brainstem-app-');
  const config = testConfig({
    BRAINSTEM_JOURNAL_DIR: `${dir.path}/journal`,
    BRAINSTEM_PROFILES_DIR: `${dir.path}/profiles`,
    BRAINSTEM_PORT: '0',
    BRAINSTEM_API_TOKEN: TEST_USER_TOKEN,
    ...env,
  });
  const app = await createApp(config, { logger: options.logger ?? false, dashboardDir: options.dashboardDir, host: options.host });
  let url = '';
  if (options.listen) {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.getHttpServer().address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    app.get(ServiceUrl).set(url);
  }
  const fastify = app.getHttpAdapter().getInstance();
  const rawInject = fastify.inject.bind(fastify) as NestFastifyApplication['inject'];
  const token = config.server.api_token ?? '';
  const credentials = app.get(Credentials);
  const tokenOf: TestApp['tokenOf'] = (principal = 'user') =>
    principal === 'user' ? token : principal === 'main_brain' ? credentials.brainToken() : credentials.workerToken(principal.worker);
  const auth: TestApp['auth'] = (principal) => ({ authorization: `Bearer ${tokenOf(principal)}` });
  const inject = ((opts: InjectOptions) => rawInject({ ...opts, headers: { ...auth(), ...opts.headers } })) as NestFastifyApplication['inject'];
  return {
    app,
    config,
    url,
    inject,
    rawInject,
    token,
    tokenOf,
    auth,
    close: async () => {
      await app.close();
      dir.remove();
    },
  };
}
