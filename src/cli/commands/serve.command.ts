import { KNOBS, flagOf } from '../../config/config.schema';
import { unsupportedPlatform } from '../../sessions/runtimes/process-runner';
import { EXIT, Options, parseCommand } from '../cli-context';
import { Command, usageError, usageOf } from './command';

/** Every setting of the configuration, as its flag (BRAINSTEM_JOURNAL_DIR → --journal-dir). */
const SETTINGS: Options = Object.fromEntries(KNOBS.map((k) => [flagOf(k).slice(2), { type: 'string' }]));

/** `brainstem serve`: the service in this process, as `npm start` runs it. Resolves null: the service ends the process. */
export const serveCommand: Command = {
  name: 'serve',
  synopsis: '[--<setting> <value> …]',
  summary: 'run the service here (as npm start does); each setting of the configuration is a flag: --port 4900, --journal-dir ~/j',
  run: async (args, ctx) => {
    const usage = `${usageOf(serveCommand)}\n  ${serveCommand.summary}\n  settings: ${Object.keys(SETTINGS).map((s) => `--${s}`).join(', ')}`;
    const p = parseCommand(args, { ...SETTINGS, help: { type: 'boolean', short: 'h' } }, { min: 0, max: 0 });
    if ('error' in p) return usageError(ctx, 'serve', p.error, usage);
    if (p.values.help) {
      ctx.io.out(`usage: ${usage}`);
      return EXIT.ok;
    }
    // As src/main.ts: where workers cannot be tracked, nothing is read, created or opened.
    const unsupported = unsupportedPlatform(process.platform);
    if (unsupported) {
      ctx.io.err(`brainstem: ${unsupported}`);
      return EXIT.failed;
    }
    const { bootstrap } = await import('../../bootstrap');
    await bootstrap(args);
    return null;
  },
};
