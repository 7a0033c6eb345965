import { NO_FILTER, invertPreview, matchesFilter } from './session-filter';
import { Session } from './types';

const session = (over: Partial<Session>): Session => ({
  id: 'cs_1',
  alias: 'w1',
  title: 'build the parser',
  runtime: 'command',
  profile_id: null,
  cwd: '/work/app',
  node: null,
  state: 'working',
  state_label: null,
  state_since: '2026-01-01T00:00:00.000Z',
  excluded: false,
  supervised: true,
  pid: 4242,
  detached: false,
  exit_code: null,
  exit_signal: null,
  exit_reason: null,
  last_progress: null,
  pending: null,
  queued_permissions: [],
  held: null,
  loop: null,
  usage: { turns: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, tokens: 0, cost_usd: 0, cost_estimated: false },
  budget: null,
  rate_limit: null,
  parked: null,
  origin: 'brainstem',
  external: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  isolation: 'none',
  work_tree: null,
  worktree: null,
  warnings: [],
  network: [],
  sandbox: { on: false, policy: null, reason: 'BRAINSTEM_SANDBOX is off' },
  ...over,
});

describe('the sessions filter', () => {
  it('Given text with pattern characters, When filtering, Then it matches as a plain substring, case-insensitive, over alias, title, id and cwd', () => {
    const dotted = session({ title: 'fix a.b (urgent)' });
    expect(matchesFilter(dotted, { ...NO_FILTER, text: 'A.B (' })).toBe(true);
    expect(matchesFilter(session({ title: 'fix axb' }), { ...NO_FILTER, text: 'a.b' })).toBe(false);
    expect(matchesFilter(session({}), { ...NO_FILTER, text: '[' })).toBe(false);
    expect(matchesFilter(session({}), { ...NO_FILTER, text: '/WORK' })).toBe(true);
    expect(matchesFilter(session({}), { ...NO_FILTER, text: 'W1' })).toBe(true);
  });

  it('Given a state and a runtime, When filtering, Then both must match', () => {
    const s = session({ state: 'pending_decision', runtime: 'codex' });
    expect(matchesFilter(s, { state: 'pending_decision', runtime: 'codex', text: '' })).toBe(true);
    expect(matchesFilter(s, { state: 'working', runtime: 'codex', text: '' })).toBe(false);
    expect(matchesFilter(s, { state: 'pending_decision', runtime: 'command', text: '' })).toBe(false);
  });

  it('Given visible sessions, When inverting, Then each one flips its exclusion', () => {
    const flips = invertPreview([session({ id: 'cs_a', alias: 'w1' }), session({ id: 'cs_b', alias: 'w2', excluded: true })]);
    expect(flips.map((f) => [f.id, f.excluded])).toEqual([
      ['cs_a', true],
      ['cs_b', false],
    ]);
  });
});
