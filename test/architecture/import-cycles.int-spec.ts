import { join } from 'node:path';
import { ROOT, dependencyGraph } from './dependency-graph';

describe('no import cycle (madge over src/)', () => {
  it('given the fixture of two files importing each other only as types, then the check reports that cycle', async () => {
    const fixture = await dependencyGraph([join(ROOT, 'test', 'fixtures', 'import-cycle')]);
    expect(fixture.circular()).toEqual([['driver.ts', 'round.ts']]);
  });

  it('has no import cycle', async () => {
    const src = await dependencyGraph([join(ROOT, 'src')]);
    // Sanity: the graph is the whole tree, not an empty or mis-rooted one.
    expect(Object.keys(src.obj())).toEqual(expect.arrayContaining(['bus/domain-event.ts', 'sessions/session.registry.ts', 'supervision/supervision.service.ts']));
    expect(src.circular()).toEqual([]);
  });
});
