import { EXIT, stringFlag } from '../cli-context';
import { CliFailure } from '../service-client';
import { printable } from '../terminal-text';
import { apiCommand, printJson, sessionPath } from './command';

/**
 * `brainstem logs w1 [-n N] [-f]`: the last lines of the worker's output, then (with -f) what it writes as it writes
 * it, until Ctrl-C. With --json: the service's `{id, alias, lines}`, or with -f one JSON line per stream message.
 */
export const logsCommand = apiCommand({
  name: 'logs',
  synopsis: '<session> [-n <lines>] [-f] [--json]',
  summary: "the worker's output: its last lines (default 100), and with -f what it writes next, until Ctrl-C",
  options: { lines: { type: 'string', short: 'n' }, follow: { type: 'boolean', short: 'f' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  run: async (p, api, ctx) => {
    const path = sessionPath(p.positionals[0]);
    const lines = stringFlag(p, 'lines') ?? '100';
    if (!/^[1-9]\d{0,4}$/.test(lines)) throw new CliFailure(`-n: expected a positive integer, got ${JSON.stringify(lines)}`, EXIT.usage);
    if (!p.values.follow) {
      const output = await api.call<{ id: string; alias: string; lines: string[] }>('GET', `${path}/output?tail=${lines}`);
      if (p.values.json) printJson(ctx, output);
      else output.lines.forEach((l) => ctx.io.out(printable(l)));
      return EXIT.ok;
    }
    const write = (text: string): void => void ctx.stdout.write(text);
    await api.stream(`${path}/output/stream?tail=${lines}`, {
      message: (m) => {
        if (m.data === '') return;
        if (p.values.json) write(`${JSON.stringify({ event: m.event, data: JSON.parse(m.data) })}\n`);
        else if (m.event === 'tail') (JSON.parse(m.data) as { lines: string[] }).lines.forEach((l) => write(`${printable(l)}\n`));
        else if (m.event === 'output') write(printable((JSON.parse(m.data) as { text: string }).text));
      },
    });
    // The service closes the stream only when it shuts down.
    throw new CliFailure('the service closed the stream (it is shutting down)', EXIT.unreachable);
  },
});
