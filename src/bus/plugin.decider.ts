import { Decision } from '../journal/command-handler';
import { NewDomainEvent } from './domain-event';

/**
 * The `plugins` stream, pure: what the plugin host saw of a plugin it loaded (loaded, or failed and disabled) is
 * journaled as it is. No decision depends on what the stream holds, so its state is empty: the host holds only the
 * stream's version, which its appends name.
 */
export type PluginsState = null;

export type PluginCommand = { type: 'report_loaded'; name: string; path: string } | { type: 'report_failed'; name: string; path: string; error: string };

export type PluginEvent = NewDomainEvent<'plugin.loaded'> | NewDomainEvent<'plugin.failed'>;

export function decide(cmd: PluginCommand): Decision<PluginEvent> {
  if (cmd.type === 'report_loaded') return { events: [{ type: 'plugin.loaded', data: { name: cmd.name, path: cmd.path } }] };
  return { events: [{ type: 'plugin.failed', data: { name: cmd.name, path: cmd.path, error: cmd.error } }] };
}

export const evolve = (state: PluginsState): PluginsState => state;
