import { AsyncLocalStorage } from 'node:async_hooks';
import { isAbsolute, resolve } from 'node:path';
import { Observable, Subject, Subscription, config as rxjsConfig } from 'rxjs';
import { BrainstemConfig } from '../config/config.schema';
import { SerialQueue } from '../common/serial-queue';
import { CommandStream, handleCommand } from '../journal/command-handler';
import { Journal, JournalReader } from '../journal/journal.port';
import { DomainEvent } from './domain-event';
import { EventBus } from './event-bus';
import { PluginCommand, PluginsState, decide, evolve } from './plugin.decider';

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
  /** What the plugin subscribed to through ctx.journal, dropped with it. */
  journalSubs: Subscription;
  failed: boolean;
}

export const PLUGINS_STREAM = 'plugins';

/** How long register() may take before the plugin is failed (a register that never settles must not hold the boot). */
const PLUGIN_REGISTER_TIMEOUT_MS = 10_000;

/**
 * The plugin whose code is running, carried across its callbacks, timers and promises. One per process, like the
 * process-level handlers that read it.
 */
const pluginScope = new AsyncLocalStorage<{ plugin: LoadedPlugin; host: PluginHost }>();

/**
 * For the process's uncaughtException and unhandledRejection handlers: true when the error came from a plugin's
 * code, which is then disabled and its failure journaled; false when it is the service's own.
 */
export function claimPluginError(err: unknown): boolean {
  const scope = pluginScope.getStore();
  if (!scope) return false;
  void scope.host.disable(scope.plugin, err);
  return true;
}

/**
 * Loads plugins and keeps each one isolated: a plugin's callbacks run inside its own async context, so an
 * error it throws anywhere (register, a subscriber, a timer it started, a promise it left rejected) is traced
 * back to it (RxJS errors here; uncaught exceptions and rejections through claimPluginError, which the process's
 * handlers call); the plugin's subscriptions are then dropped, the failure is journaled as plugin.failed, and the
 * service keeps running.
 */
export class PluginHost {
  private readonly plugins: LoadedPlugin[] = [];
  private readonly previousHandler = rxjsConfig.onUnhandledError;
  /** The version of stream `plugins` the host's appends name: its own, and those other nodes' appends moved it to. */
  private version = 0;
  private unfollow: (() => void) | null = null;
  private readonly reports = new SerialQueue();

  constructor(
    private readonly bus: EventBus,
    private readonly journal: Journal,
    private readonly config: Readonly<BrainstemConfig>,
    private readonly logger: PluginLogger,
    private readonly registerTimeoutMs = PLUGIN_REGISTER_TIMEOUT_MS,
  ) {
    rxjsConfig.onUnhandledError = (err) => this.onUnhandledError(err);
  }

  /** An error thrown in an RxJS subscriber: a plugin's is claimed (the plugin is disabled), any other is logged. */
  private onUnhandledError(err: unknown): void {
    if (!claimPluginError(err)) this.logger.error(`unhandled error in an event subscriber: ${(err as Error)?.stack ?? String(err)}`);
  }

  private inScope<T>(plugin: LoadedPlugin, fn: () => T): T {
    return pluginScope.run({ plugin, host: this }, fn);
  }

  get loaded(): ReadonlyArray<{ name: string; path: string; failed: boolean }> {
    return this.plugins.map(({ name, path, failed }) => ({ name, path, failed }));
  }

  /** Loads the plugins at `paths`, relative ones from `cwd` (the directory the service was started in). */
  async loadAll(paths: readonly string[], cwd: string): Promise<void> {
    await this.open();
    for (const p of paths) await this.load(isAbsolute(p) ? p : resolve(cwd, p));
  }

  /** Follows the stream (nodes sharing the journal journal their plugins on it too), then reads its version. */
  private async open(): Promise<void> {
    if (this.unfollow) return;
    this.unfollow = this.journal.follow((e) => {
      if (e.stream === PLUGINS_STREAM) this.version = Math.max(this.version, e.version);
    });
    this.version = Math.max(this.version, await this.journal.streamVersion(PLUGINS_STREAM));
  }

  private readonly stream: CommandStream<PluginsState> = {
    name: PLUGINS_STREAM,
    current: () => ({ state: null, version: this.version }),
    adopt: (_state, version) => (this.version = version),
  };

  /** What the host saw of a plugin, journaled through the one command path, one report at a time. */
  private report(cmd: PluginCommand): Promise<unknown> {
    return this.reports.run(() => handleCommand(this.journal, this.stream, () => decide(cmd), evolve));
  }

  private async load(path: string): Promise<void> {
    const plugin: LoadedPlugin = { name: path, path, events: new Subject(), feed: Subscription.EMPTY, journalSubs: new Subscription(), failed: false };
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
        if (!plugin.failed) this.inScope(plugin, () => plugin.events.next(e));
      });
      const ctx: PluginContext = {
        events$: plugin.events.asObservable(),
        journal: this.readOnly(plugin),
        logger: prefixed(this.logger, plugin.name),
        config: this.config,
      };
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`register() did not finish within ${this.registerTimeoutMs} ms`)), this.registerTimeoutMs);
      });
      try {
        await Promise.race([this.inScope(plugin, () => def.register!(ctx)), timedOut]);
      } finally {
        clearTimeout(timer);
      }
      if (!plugin.failed) {
        await this.report({ type: 'report_loaded', name: plugin.name, path });
        this.logger.log(`plugin ${plugin.name} loaded from ${path}`);
      }
    } catch (err) {
      await this.disable(plugin, err);
    }
  }

  /** Drops everything the plugin subscribed to and journals plugin.failed; once per plugin. */
  async disable(plugin: LoadedPlugin, err: unknown): Promise<void> {
    if (plugin.failed) return;
    plugin.failed = true;
    plugin.feed.unsubscribe();
    plugin.events.unsubscribe();
    plugin.journalSubs.unsubscribe();
    const error = (err as Error)?.message ?? String(err);
    this.logger.error(`plugin ${plugin.name} failed and was disabled: ${error}`);
    await this.report({ type: 'report_failed', name: plugin.name, path: plugin.path, error }).catch((e) => this.logger.error(`could not journal plugin.failed: ${(e as Error).message}`));
  }

  close(): void {
    this.unfollow?.();
    this.unfollow = null;
    for (const p of this.plugins) {
      p.feed.unsubscribe();
      // A failed plugin's subject is already unsubscribed (closed): completing it would throw.
      if (!p.failed) p.events.complete();
      p.journalSubs.unsubscribe();
    }
    rxjsConfig.onUnhandledError = this.previousHandler;
  }

  /** The journal as a plugin sees it: reads only; its subscriptions deliver in the plugin's scope and end with it. */
  private readOnly(plugin: LoadedPlugin): JournalReader {
    const j = this.journal;
    return {
      head: () => j.head(),
      openedHead: () => j.openedHead(),
      readStream: (s, v, l) => j.readStream(s, v, l),
      readAll: (a, l) => j.readAll(a, l),
      subscribe: (a) =>
        new Observable((subscriber) => {
          const sub = j.subscribe(a).subscribe({
            next: (e) => {
              if (!plugin.failed) this.inScope(plugin, () => subscriber.next(e));
            },
            error: (e: unknown) => subscriber.error(e),
            complete: () => subscriber.complete(),
          });
          plugin.journalSubs.add(sub);
          return () => {
            sub.unsubscribe();
            plugin.journalSubs.remove(sub);
          };
        }),
      streamVersion: (s) => j.streamVersion(s),
      loadSnapshot: (s) => j.loadSnapshot(s),
      verify: () => j.verify(),
    };
  }
}

function prefixed(logger: PluginLogger, name: string): PluginLogger {
  return {
    log: (m) => logger.log(`[${name}] ${m}`),
    warn: (m) => logger.warn(`[${name}] ${m}`),
    error: (m) => logger.error(`[${name}] ${m}`),
  };
}
