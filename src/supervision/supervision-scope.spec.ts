import { ScopePlan, ScopeRefusal, ScopeSession, includeExternalChanges, planScope } from './supervision-scope';

const sessions: ScopeSession[] = [
  { id: 'cs_a', alias: 'w1', excluded: false, active: true },
  { id: 'cs_b', alias: 'w2', excluded: true, active: true },
  { id: 'cs_c', alias: 'w3', excluded: false, active: true },
  { id: 'cs_d', alias: 'w4', excluded: false, active: false },
];

/** The plan, where the scope is accepted. */
function plan(p: ScopePlan | ScopeRefusal): ScopePlan {
  if ('error' in p) throw new Error(`refused: ${p.error.message}`);
  return p;
}

/** The refusal, where the scope names no session it could apply to. */
const refusal = (p: ScopePlan | ScopeRefusal) => ('error' in p ? p.error : null);

describe('supervision scope', () => {
  it('all: clears every exclusion', () => {
    expect(planScope('all', ['ignored'], sessions)).toEqual({ mode: 'all', changes: [{ id: 'cs_b', excluded: false }], unknown_ids: [] });
  });

  it('only: includes the listed sessions (ids or aliases) and excludes every other active one', () => {
    const planned = plan(planScope('only', ['w2', 'cs_c'], sessions));
    expect(planned.changes).toEqual([
      { id: 'cs_a', excluded: true },
      { id: 'cs_b', excluded: false },
    ]);
  });

  it('except: excludes the listed sessions and includes the rest', () => {
    expect(plan(planScope('except', ['w1'], sessions)).changes).toEqual([
      { id: 'cs_a', excluded: true },
      { id: 'cs_b', excluded: false },
    ]);
  });

  it('invert: flips exclusion over the given visible sessions only', () => {
    expect(plan(planScope('invert', ['w1', 'w2'], sessions)).changes).toEqual([
      { id: 'cs_a', excluded: true },
      { id: 'cs_b', excluded: false },
    ]);
  });

  it('reports unknown ids beside valid ones', () => {
    expect(plan(planScope('except', ['w1', 'w99', 'cs_zzz'], sessions)).unknown_ids).toEqual(['w99', 'cs_zzz']);
  });

  it.each(['only', 'except'] as const)('%s naming only exited sessions is refused (only would exclude every active session)', (mode) => {
    // Given cs_d has exited
    // When the scope names only it
    // Then nothing is planned, and the error says why
    expect(refusal(planScope(mode, ['w4'], sessions))).toMatchObject({ code: 'scope_names_no_session', message: expect.stringMatching(/needs at least one valid session id \(exited: w4\)/) });
  });

  it('only naming an active and an exited session supervises the active one', () => {
    expect(plan(planScope('only', ['w2', 'w4'], sessions)).changes).toEqual([
      { id: 'cs_a', excluded: true },
      { id: 'cs_b', excluded: false },
      { id: 'cs_c', excluded: true },
    ]);
  });

  it.each(['only', 'except', 'invert'] as const)('%s with no valid id is refused', (mode) => {
    expect(refusal(planScope(mode, ['w99'], sessions))).toMatchObject({ code: 'scope_names_no_session', message: expect.stringContaining('unknown: w99') });
    expect(refusal(planScope(mode, [], sessions))).toMatchObject({ code: 'scope_names_no_session', message: expect.stringMatching(/needs at least one valid session id/) });
  });

  describe('external sessions (claude started outside Brainstem) join only by the user\'s choice', () => {
    const withExternal: ScopeSession[] = [
      { id: 'cs_a', alias: 'w1', excluded: true, active: true },
      { id: 'cs_x', alias: 'w5', excluded: true, active: true, external: true },
      { id: 'cs_y', alias: 'w6', excluded: false, active: true, external: true },
      { id: 'cs_z', alias: 'w7', excluded: true, active: false, external: true },
    ];

    it("Given the brain's scope (externals none), When all or except bring sessions in, Then no external session joins; one may still be taken out", () => {
      expect(plan(planScope('all', [], withExternal)).changes).toEqual([{ id: 'cs_a', excluded: false }]);
      expect(plan(planScope('only', ['w1'], withExternal)).changes).toEqual([
        { id: 'cs_a', excluded: false },
        { id: 'cs_y', excluded: true },
      ]);
      expect(plan(planScope('only', ['w5'], withExternal)).changes).toEqual([{ id: 'cs_y', excluded: true }]);
    });

    it("Given the user's scope (externals named), When it names an external session, Then that one joins and the others stay out", () => {
      expect(plan(planScope('only', ['w1', 'w5'], withExternal, 'named')).changes).toEqual([
        { id: 'cs_a', excluded: false },
        { id: 'cs_x', excluded: false },
        { id: 'cs_y', excluded: true },
      ]);
      expect(plan(planScope('except', ['w1'], withExternal, 'named')).changes).toEqual([]);
      expect(plan(planScope('invert', ['w5'], withExternal, 'named')).changes).toEqual([{ id: 'cs_x', excluded: false }]);
    });

    it("Given the user's include_external (externals all), When all is set, Then every external session joins too", () => {
      expect(plan(planScope('all', [], withExternal, 'all')).changes).toEqual([
        { id: 'cs_a', excluded: false },
        { id: 'cs_x', excluded: false },
        { id: 'cs_z', excluded: false },
      ]);
    });

    it('Given include_external with no scope, Then the live external sessions that are out join', () => {
      expect(includeExternalChanges(withExternal)).toEqual([{ id: 'cs_x', excluded: false }]);
    });
  });
});
