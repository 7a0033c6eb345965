import type { AutonomousView } from '../../supervision/supervision.view';
import { CliFailure } from '../service-client';
import { EXIT, stringFlag } from '../cli-context';
import { supervisionLine } from '../session-format';
import { apiCommand, printJson } from './command';

export const superviseCommand = apiCommand({
  name: 'supervise',
  synopsis: 'on|off [--goal <goal>] [--max-turns <n>] [--include-external] [--json]',
  summary: 'turn supervision by the main brain on (with a goal, a turn cap, the claude sessions you run yourself) or off',
  options: { goal: { type: 'string' }, 'max-turns': { type: 'string' }, 'include-external': { type: 'boolean' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  run: async (p, api, ctx) => {
    const [switched] = p.positionals;
    if (switched !== 'on' && switched !== 'off') throw new CliFailure(`expected on or off, got ${JSON.stringify(switched)}`, EXIT.usage);
    const goal = stringFlag(p, 'goal');
    const maxTurns = stringFlag(p, 'max-turns');
    const external = p.values['include-external'] === true;
    if (switched === 'off' && (goal !== undefined || maxTurns !== undefined || external)) throw new CliFailure('--goal, --max-turns and --include-external go with on', EXIT.usage);
    if (maxTurns !== undefined && !/^[1-9]\d{0,5}$/.test(maxTurns)) throw new CliFailure(`--max-turns: expected a positive integer, got ${JSON.stringify(maxTurns)}`, EXIT.usage);
    const body = { enabled: switched === 'on', ...(goal !== undefined ? { task_hint: goal } : {}), ...(maxTurns ? { max_turns: Number(maxTurns) } : {}), ...(external ? { include_external: true } : {}) };
    const { autonomous } = await api.call<{ autonomous: AutonomousView | null }>('POST', '/session-os/main-brain/autonomous', body);
    if (p.values.json) printJson(ctx, autonomous);
    else ctx.io.out(`supervision ${supervisionLine(autonomous)}`);
    return 0;
  },
});
