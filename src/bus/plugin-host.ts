import { AsyncLocalStorage } from 'node:async_hooks';
import { isAbsolute, resolve } from 'node:path';
import { Observable, Subject, Subscription, config as rxjsConfig } from 'rxjs';
import { BrainstemConfig } from '../config/config.schema';
import { JournalReader } from '../journal/journal.port';
import { DomainEvent } from './domain-event';
import { EventBus } from './event-bus';

export interface PluginLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface PluginContext {
  events$: Observable<DomainEvent>;
  journal: JournalReader;
  logger: PluginLogger;
  config: Readonly<BrainstemConfig>;
}

export interface BrainstemPlugin {
  name: string;
  register(ctx: PluginContext): void | Promise<void>;
}

interface LoadedPlugin {
  name: string;
  path: string;
  events: Subject<DomainEvent>;
  feed: Subscription;
  failed: boolean;
}

/**
 * Loads plugins and keeps each one isolated: a plugin's callbacks run inside its own async context, so an
 * error it throws anywhere (register, a subscriber, a timer it started) is traced back to it; the plugin's
 * subscriptions are then dropped, the failure is journaled as plugin.failed, and the service keeps running.
 */
export class PluginHost {
  private readonly context = new AsyncLocalStorage<LoadedPlugin>();
  private readonly plugins: LoadedPlugin[] = [];
  private readonly previousHandler = rxjsConfig.onUnhandledError;

  constructor(
    private readonly bus: EventBus,
    private readonly journal: JournalReader,
    private readonly config: Readonly<BrainstemConfig>,
    private readonly logger: PluginLogger,
  ) {
    rxjsConfig.onUnhandledError = (err) => this.onUnhandledError(err);
  }

  /** Also called for uncaught exceptions and unhandled rejections; true when it belonged to a plugin. */
  onUnhandledError(err: unknown): boolean {
    const plugin = this.context.getStore();
    if (plugin) {
      void this.fail(plugin, err);
      return true;
    }
    this.logger.error(`unhandled error in an event subscriber: ${(err as Error)?.stack ?? String(err)}`);
    return false;
  }

  get loaded(): ReadonlyArray<{ name: string; path: string; failed: boolean }> {
    return this.plugins.map(({ name, path, failed }) => ({ name, path, failed }));
  }

  async loadAll(paths: readonly string[], cwd = process.cwd()): Promise<void> {
    for (const p of paths) await this.load(isAbsolute(p) ? p : resolve(cwd, p));
  }

  private async load(path: string): Promise<void> {
    const plugin: LoadedPlugin = { name: path, path, events: new Subject(), feed: Subscription.EMPTY, failed: false };
    this.plugins.push(plugin);
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const mod = require(path) as { default?: BrainstemPlugin } & Partial<BrainstemPlugin>;
      const def = (mod.default ?? mod) as Partial<BrainstemPlugin>;
      if (typeof def.name !== 'string' || typeof def.register !== 'function') {
        throw new Error('a plugin module must export { name: string, register(ctx) }');
      }
      plugin.name = def.name;
      plugin.feed = this.bus.events$.subscribe((e) => {
        if (!plugin.failed) this.context.run(plugin, () => plugin.events.next(e));
      });
      const ctx: PluginContext = {
        events$: plugin.events.asObservable(),
        journal: readOnly(this.journal),
        logger: prefixed(this.logger, plugin.name),
        config: this.config,
      };
      await this.context.run(plugin, () => def.register!(ctx));
      if (!plugin.failed) {
        await this.bus.emit('plugins', [{ type: 'plugin.loaded', data: { name: plugin.name, path } }]);
        this.logger.log(`plugin ${plugin.name} loaded from ${path}`);
      }
    } catch (err) {
      await this.fail(plugin, err);
    }
  }

  private async fail(plugin: LoadedPlugin, err: unknown): Promise<void> {
    if (plugin.failed) return;
    plugin.failed = true;
    plugin.feed.unsubscribe();
    plugin.events.unsubscribe();
    const error = (err as Error)?.message ?? String(err);
    this.logger.error(`plugin ${plugin.name} failed and was disabled: ${error}`);
    await this.bus
      .emit('plugins', [{ type: 'plugin.failed', data: { name: plugin.name, path: plugin.path, error } }])
      .catch((e) => this.logger.error(`could not journal plugin.failed: ${(e as Error).message}`));
  }

  close(): void {
    for (const p of this.plugins) {
      p.feed.unsubscribe();
      p.events.complete();
    }
    rxjsConfig.onUnhandledError = this.previousHandler;
  }
}

function readOnly(j: JournalReader): JournalReader {
  return {
    head: () => j.head(),
    openedHead: () => j.openedHead(),
    readStream: (s, v, l) => j.readStream(s, v, l),
    readAll: (a, l) => j.readAll(a, l),
    subscribe: (a) => j.subscribe(a),
    streamVersion: (s) => j.streamVersion(s),
    loadSnapshot: (s) => j.loadSnapshot(s),
    verify: () => j.verify(),
  };
}

function prefixed(logger: PluginLogger, name: string): PluginLogger {
  return {
    log: (m) => logger.log(`[${name}] ${m}`),
    warn: (m) => logger.warn(`[${name}] ${m}`),
    error: (m) => logger.error(`[${name}] ${m}`),
  };
}
