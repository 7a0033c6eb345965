import type { AutonomousView } from '../../supervision/supervision.view';
import { CliFailure } from '../service-client';
import { EXIT, stringFlag } from '../cli-context';
import { supervisionLine } from '../session-format';
import { apiCommand, printJson } from './command';

export const superviseCommand = apiCommand({
  name: 'supervise',
  synopsis: 'on|off [--goal <goal>] [--max-turns <n>] [--json]',
  summary: 'turn supervision by the main brain on (with a goal and a turn cap) or off',
  options: { goal: { type: 'string' }, 'max-turns': { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  run: async (p, api, ctx) => {
    const [switched] = p.positionals;
    if (switched !== 'on' && switched !== 'off') throw new CliFailure(`expected on or off, got ${JSON.stringify(switched)}`, EXIT.usage);
    const goal = stringFlag(p, 'goal');
    const maxTurns = stringFlag(p, 'max-turns');
    if (switched === 'off' && (goal !== undefined || maxTurns !== undefined)) throw new CliFailure('--goal and --max-turns go with on', EXIT.usage);
    if (maxTurns !== undefined && !/^[1-9]\d{0,5}$/.test(maxTurns)) throw new CliFailure(`--max-turns: expected a positive integer, got ${JSON.stringify(maxTurns)}`, EXIT.usage);
    const body = { enabled: switched === 'on', ...(goal !== undefined ? { task_hint: goal } : {}), ...(maxTurns ? { max_turns: Number(maxTurns) } : {}) };
    const { autonomous } = await api.call<{ autonomous: AutonomousView | null }>('POST', '/session-os/main-brain/autonomous', body);
    if (p.values.json) printJson(ctx, autonomous);
    else ctx.io.out(`supervision ${supervisionLine(autonomous)}`);
    return 0;
  },
});
