import { inheritedEnv } from '../../auth/child-env';
import { Credentials } from '../../auth/credentials';
import { TOKEN_ENV } from '../../profiles/emitters/emitter-support';
import { claudeToolsUpFront } from '../../sessions/runtimes/claude-code.runtime';
import { BrainstemConfig } from '../../config/config.schema';
import { ServiceUrl } from '../../config/service-url';
import { RoundDriver, streamDriver } from '../../supervision/round-driver.port';
import { commandDriver } from './command.driver';
import { webhookDriver } from './webhook.driver';

/**
 * A driver for a brain the user brings (config validation guarantees its command or URL); a command brain inherits
 * `env`, the service's environment.
 */
export function createRoundDriver(config: BrainstemConfig, url: ServiceUrl, credentials: Credentials, env: Readonly<Record<string, string | undefined>>): RoundDriver {
  switch (config.main_brain.driver) {
    case 'command':
      // The brain's own credential: the main-brain tools, never the user's token. A claude brain gets them up front.
      return commandDriver(config.main_brain.command as string, () => ({
        ...inheritedEnv(env),
        ...claudeToolsUpFront(env),
        BRAINSTEM_URL: url.get(),
        [TOKEN_ENV]: credentials.brainToken(),
      }));
    case 'webhook':
      return webhookDriver(config.main_brain.webhook_url as string, () => url.get());
    default:
      return streamDriver;
  }
}
